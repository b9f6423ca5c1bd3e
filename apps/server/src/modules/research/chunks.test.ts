import { describe, expect, it } from 'vitest';
import { type Chunk, RANKED_PER_PAGE, rankingCandidates } from './chunks.ts';

const filler = (n: number) => `Paragraph ${n} talks about the weather, the harbour and the old town in general terms.`;

/** A page of `count` chunks of filler, with some chunks replaced by the given texts. */
function page(index: number, count: number, special: Record<number, string> = {}): Chunk[] {
  return Array.from({ length: count }, (_, i) => ({ page: index, index: i, text: special[i] ?? filler(i) }));
}

describe('rankingCandidates', () => {
  it('keeps every chunk of pages short enough to rank whole', () => {
    const chunks = [...page(0, 3), ...page(1, RANKED_PER_PAGE)];
    expect(rankingCandidates('e-bike commuting', chunks)).toEqual(chunks.map((_, i) => i));
  });

  it("keeps the chunks of a long page that use the query's words, in their forms, in page order", () => {
    const long = page(0, 40, {
      3: 'Commuters who switch to an e-bike rarely go back.',
      17: 'Most bikes with a mid-drive motor climb better.',
      25: 'The daily commute is shorter than a bus ride.',
      38: 'An e-bike commute of twelve kilometres takes forty minutes.',
    });
    const chosen = rankingCandidates('e-bike commuting', long);
    expect(chosen).toHaveLength(RANKED_PER_PAGE);
    expect(chosen).toEqual([...chosen].sort((a, b) => a - b));
    for (const i of [3, 17, 25, 38]) expect(chosen).toContain(i);
  });

  it('ranks the chunks with the rarer query words first when a page has more matches than room', () => {
    // "bike" is everywhere on this page; "battery" only in a few chunks, which must all be kept.
    const battery = [5, 11, 29, 44];
    const long = page(
      0,
      60,
      Object.fromEntries(
        Array.from({ length: 60 }, (_, i) => [
          i,
          battery.includes(i) ? 'The bike battery lasts three winters.' : `Bike note ${i}: a bike and a bike.`,
        ]),
      ),
    );
    const chosen = rankingCandidates('bike battery', long);
    for (const i of battery) expect(chosen).toContain(i);
  });
});
