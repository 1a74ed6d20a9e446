/**
 * English function words and other low-content words (~280), as tokens (apostrophes removed).
 * Much larger than the BM25 list: keyphrase extraction splits candidates at them ("because of
 * the" is no tag), and question scoring ignores them ("what", "how", "does"), whereas a search
 * index can afford to keep them.
 */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  `a about above across after afterwards again against all almost alone along already also
  although always am among amongst an and another any anyhow anyone anything anyway anywhere are
  around as at back be became because become becomes been before beforehand behind being below
  beside besides between beyond both but by can cannot could did do does doing done down during
  each either else elsewhere enough etc even ever every everyone everything everywhere except few
  first for former formerly from further get gets getting got had has have having he hence her
  here hers herself him himself his how however i if in indeed instead into is it its itself
  just last later least less let like likely made make makes many may maybe me meanwhile might
  mine more moreover most mostly much must my myself namely neither never nevertheless next no
  nobody none nor not nothing now nowhere of off often on once one only onto or other others
  otherwise our ours ourselves out over own per perhaps please quite rather really same second
  see seem seemed seems several she should since so some somehow someone something sometimes
  somewhere still such than that the their theirs them themselves then thence there thereby
  therefore these they thing things this those though through throughout thus to together too
  toward towards two under unless unlike until up upon us use used uses using very via was we
  well were what whatever when whenever where whereas wherever whether which while who whoever
  whole whom whose why will with within without would yet you your yours yourself yourselves
  dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt im ive youre
  youve theyre weve`
    .split(/\s+/)
    .filter((w) => w !== ''),
);

