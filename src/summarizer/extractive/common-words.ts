/**
 * A small background corpus: common English words, roughly by frequency (most frequent first).
 * A word's rarity comes from here, not from the conversation itself, so a name said ten times
 * still counts as rare and "going" never does. Written by hand; nothing is downloaded.
 */

/** Function words: they carry no content. */
const FUNCTION_WORDS = `the of and to a in is it you that he was for on are with as i his they be at one have this from or had by
but some what there we can out other were all your when up use word how said an each she which do their time if will way about
many then them would write so these her him has more could go come did my no most who over know than call first may down
been now find any new our me just also its into those very am us own such where why off same both few while should here too
again each let yes however every often still thing things much even well back through after before because around another
being does doing done got get gets getting made make makes making says say saying went going goes gone way ways anything
something nothing everything someone anyone everyone somebody anybody nobody maybe perhaps quite rather really actually
basically literally totally definitely pretty kind sort lot lots bit ok okay oh hey hi hello wow yeah yep nope um uh hmm
haha lol thanks thank please sure right yes no not never always sometimes usually ever already yet soon just only also too
i'm you're he's she's it's we're they're i've you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll
she'll we'll they'll isn't aren't wasn't weren't don't doesn't didn't won't wouldn't can't couldn't shouldn't haven't
hasn't hadn't that's there's here's what's who's let's how's where's mine yours ours theirs myself yourself himself
herself itself ourselves themselves whose whom whatever whenever wherever whichever though although unless until since
during within without between among against toward towards upon onto across along behind below beneath beside beyond
inside outside near under above per via than whether either neither nor`;

const COMMON_CONTENT_WORDS = `people year years day days man men woman women child children life world school state family student group
country problem hand part place case week weeks company system program question work government number night point home
water room mother area money story fact month months lot right study book eye job business issue side head house service
friend friends father power hour game line end member law car city community name president team minute idea kid kids
body information parent face others level office door health person art war history party result change morning reason
research girl guy moment air teacher force education foot boy age policy process music market sense nation plan college
interest death experience effect class control care field development role effort rate heart drug show leader light
voice wife husband police mind price report decision son daughter view relationship town road arm difference value
building action model season society tax director position player record paper space ground form event official matter
center couple site project activity star table need court oil situation cost industry figure street image phone data
picture practice piece land product doctor wall patient worker news test movie north love support technology step baby
computer type attention film tree source organization hair window evidence population site plant career feeling fun time
good great little own old big high different small large next early young important few public bad same able last long
best better sure free full special easy clear recent certain personal open red difficult available likely short single
medical current wrong private past foreign fine common poor natural significant similar hot dead central happy serious
ready simple left physical general environmental financial blue democratic dark various entire close legal religious cold
final main green nice huge popular traditional cultural amazing awesome cool beautiful wonderful fantastic lovely glad
excited exciting proud happy sad tough hard fun funny interesting busy tired crazy favorite favourite whole real true
nice new own other good like love want need feel think see look know take give tell ask work seem try leave call keep
let begin help talk turn start show hear play run move live believe hold bring happen write provide sit stand lose pay
meet include continue set learn lead understand watch follow stop create speak read allow add spend grow open walk win
offer remember consider appear buy wait serve die send expect build stay fall cut reach kill remain suggest raise pass
sell require report decide pull hope enjoy share wish mean put thought felt saw took gave told asked worked seemed tried
left called kept began helped talked turned started showed heard played ran moved lived believed brought happened wrote
sat stood lost paid met included continued learned led understood watched followed stopped created spoke read allowed
added spent grew opened walked won offered remembered considered appeared bought waited served died sent expected built
stayed fell reached remained suggested raised passed sold required decided pulled hoped enjoyed shared wished meant loved
liked wanted needed felt thinking looking feeling trying taking making having coming seeing telling talking working
playing helping hoping planning loving enjoying sharing thinking glad sounds sound seems looks feels awesome great cool
totally absolutely exactly truly super especially lately recently finally probably hopefully honestly seriously
definitely certainly simply almost enough far away together later today tomorrow yesterday tonight once twice ago
inspiring inspired amazing incredible support supportive journey experience experiences moments memories memory
dream dreams passion goal goals stuff things hobby hobbies glad awesome congrats congratulations sorry cheers welcome
anyway anyways alright definitely mind means gonna wanna gotta kinda sorta lemme dunno thinkin y'all ya yo bro dude
stuff sweet nice cute glad awesome amazing totally hugs wow yay omg`;

function words(list: string): string[] {
  return list.split(/\s+/).filter((w) => w !== '');
}

/** Words given no weight in coverage. */
export const STOPWORDS: ReadonlySet<string> = new Set(words(FUNCTION_WORDS));

const RANKED = [...new Set([...words(FUNCTION_WORDS), ...words(COMMON_CONTENT_WORDS)])];

/** 0 for the most frequent background word, rising to 1 for the least frequent; undefined when not listed. */
const RANK = new Map(RANKED.map((w, i) => [w, i / RANKED.length] as const));

/** Number of distinct background words (for tests and docs). */
export const BACKGROUND_SIZE = RANKED.length;

/**
 * Weight of a lowercase word by rarity: 0 for stopwords, 0.15-0.45 for common words (rarer weighs more),
 * 1 for a word outside the background list.
 */
export function rarityWeight(word: string): number {
  if (STOPWORDS.has(word)) return 0;
  const rank = RANK.get(word);
  return rank === undefined ? 1 : 0.15 + 0.3 * rank;
}
