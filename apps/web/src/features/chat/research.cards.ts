// The cards of researches asked for in the chat, as a pure reducer: the history's cards, each later
// state of one (the newest wins, whatever order events arrive in), and the outcome message that
// takes a card's place once it arrives.
import { RESEARCH_ENDED, type TChatMessage, type TResearchCard, ZResearchReport } from '@daybook/contracts';

export interface ResearchCards {
  /** The cards shown, oldest research first. */
  cards: TResearchCard[];
  /** Researches whose outcome has arrived: an event of theirs that comes late shows nothing again. */
  over: number[];
}

export const noResearchCards: ResearchCards = { cards: [], over: [] };
/** Outcomes remembered; far more than one chat has researches running at once. */
const OVER_KEPT = 100;

export type ResearchCardsAction =
  | { type: 'history'; cards: TResearchCard[]; messages: TChatMessage[] }
  | { type: 'card'; card: TResearchCard }
  | { type: 'message'; message: TChatMessage };

const RESEARCH_PATH = /^\/resources\/research\/(\d+)$/;

/** The research whose outcome `message` is (its report, or the note on a failure or a cancel); null for others. */
export function outcomeOf(message: Pick<TChatMessage, 'message_type' | 'raw_text' | 'url'>): number | null {
  if (message.message_type === 'system_message') {
    const match = message.url ? RESEARCH_PATH.exec(message.url) : null;
    return match ? Number(match[1]) : null;
  }
  if (message.message_type !== 'research_report') return null;
  try {
    return ZResearchReport.parse(JSON.parse(message.raw_text)).id ?? null;
  } catch {
    return null;
  }
}

export const hasEnded = (card: TResearchCard) => RESEARCH_ENDED.includes(card.stage);

export function researchCardsReducer(state: ResearchCards, action: ResearchCardsAction): ResearchCards {
  switch (action.type) {
    case 'history': {
      // A card whose outcome is in the history already is over; the others are as the server has them.
      const delivered = action.messages.map(outcomeOf).filter((id) => id !== null);
      const over = [...new Set([...state.over, ...delivered])].slice(-OVER_KEPT);
      return { cards: action.cards.filter((card) => !over.includes(card.id)), over };
    }
    case 'card': {
      const { card } = action;
      if (state.over.includes(card.id)) return state;
      const at = state.cards.findIndex((c) => c.id === card.id);
      // An end with no card on screen: its outcome message follows and says it all.
      if (at < 0)
        return hasEnded(card) ? state : { ...state, cards: [...state.cards, card].sort((a, b) => a.id - b.id) };
      if ((state.cards[at] as TResearchCard).version >= card.version) return state;
      const cards = state.cards.slice();
      cards[at] = card;
      return { ...state, cards };
    }
    case 'message': {
      const id = outcomeOf(action.message);
      if (id === null) return state;
      return { cards: state.cards.filter((card) => card.id !== id), over: [...state.over, id].slice(-OVER_KEPT) };
    }
  }
}
