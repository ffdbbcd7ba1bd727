/** The earliest and latest of some ISO times (ISO UTC strings compare in time order). */
export function timeSpan(times: readonly string[]): { start: string; end: string } {
  if (times.length === 0) throw new Error('timeSpan needs at least one time');
  let start = times[0]!;
  let end = times[0]!;
  for (const time of times) {
    if (time < start) start = time;
    if (time > end) end = time;
  }
  return { start, end };
}
