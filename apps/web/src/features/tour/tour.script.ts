// The demo tour's script: what Maya, a sample user, and Daybook say in each stage. Data only; the
// engine (tour.engine.ts) decides when each line appears.
import type { TMessageType, TResearchReport } from '@daybook/contracts';

export type TourStageId = 'welcome' | 'daily_insight' | 'research' | 'wrap_up';
export type TourAuthor = 'human' | 'assistant';
export type TourMessageType = Extract<
  TMessageType,
  'markdown' | 'message' | 'research_report' | 'task_notification_final'
>;

export interface TourMessage {
  author: TourAuthor;
  message_type: TourMessageType;
  /** Research reports hold the report JSON, as in the real chat. */
  text: string;
  /** Milliseconds before this message starts, instead of the default message pause. */
  pauseMs?: number;
}

export interface TourStage {
  id: TourStageId;
  title: string;
  /** Shown in the sidebar while the stage plays. */
  explanation: string;
  /** Added to the sidebar's Key Features when the stage starts. */
  features: string[];
  messages: TourMessage[];
}

/** Who the sample conversation is between. */
export const TOUR_NAMES: Record<TourAuthor, string> = { human: 'Maya', assistant: 'Daybook' };

const report = (value: TResearchReport) => JSON.stringify(value);

const human = (text: string, pauseMs?: number): TourMessage => ({
  author: 'human',
  message_type: 'message',
  text,
  pauseMs,
});
const assistant = (text: string, pauseMs?: number): TourMessage => ({
  author: 'assistant',
  message_type: 'markdown',
  text,
  pauseMs,
});
const remembered = (text: string): TourMessage => ({
  author: 'assistant',
  message_type: 'task_notification_final',
  text,
  pauseMs: 1200,
});

const DAILY_MESSAGE = `**Good morning, Maya!** Here is your Tuesday.

**Weather in Leeds:** 11 °C and bright, showers after 3 pm. Ideal for your run.

**On your calendar**
- 7:00 am: Canal run
- 9:30 am: Ward handover
- 6:30 pm: Book club at Priya's

**Looking ahead to May:** Wasdale campsites fill up fast on bank holiday weekends, so book your Scafell Pike trip soon.`;

const SCAFELL_REPORT = report({
  query: 'best time of year to climb Scafell Pike',
  introduction:
    "Scafell Pike, England's highest mountain at 978 m, can be climbed all year, but late spring to early autumn gives the best chance of clear paths, long days and settled weather. Here is how May compares.",
  report: `### Weather
May is often one of the drier months in the Lake District, but the summit can be very different from the valleys: expect it to be several degrees colder than at Wasdale, with strong winds on the top. Low cloud can hide the path across the boulder field near the summit.

### Daylight and crowds
Days are long in May, with sunset after 9 pm by the end of the month, which leaves plenty of margin for the 4 to 6 hour round trip from Wasdale Head. Bank holiday weekends are the busiest; a midweek start avoids the queues at the car park.

### Preparation
- Check the mountain forecast the evening before and again in the morning.
- Take a map and compass: phone signal is patchy on the upper slopes.
- Pack a waterproof, a warm layer, food and more water than you think you need.`,
  conclusion:
    'May is a good month for Scafell Pike: long daylight, generally milder weather and fewer crowds than high summer. Go midweek if you can, start early, and let the mountain forecast have the final say.',
  sources: [
    {
      url: 'https://www.metoffice.gov.uk/weather/specialist-forecasts/mountain',
      title: 'Mountain forecasts, Met Office',
    },
    {
      url: 'https://www.mwis.org.uk/forecasts/english-and-welsh/lake-district',
      title: 'Lake District, Mountain Weather Information Service',
    },
    { url: 'https://en.wikipedia.org/wiki/Scafell_Pike', title: 'Scafell Pike, Wikipedia' },
    { url: 'https://www.lakedistrict.gov.uk/', title: 'Lake District National Park' },
  ],
});

export const TOUR_SCRIPT: readonly TourStage[] = [
  {
    id: 'welcome',
    title: 'Meet your assistant',
    explanation:
      'Daybook is a personal assistant that gets to know you through conversation. Follow Maya, a sample user, as she chats with it. The conversation is a scripted example, so nothing here is stored.',
    features: ['Natural, real-time chat', 'Learns about you as you talk'],
    messages: [
      assistant(
        "Hi Maya, I'm Daybook, your personal assistant. Tell me a little about your days and I'll learn what matters to you.",
      ),
      human(
        "Hi! I'm a nurse in Leeds. I run along the canal on Tuesday mornings, and I'm hiking in the Lake District in May.",
      ),
      remembered(
        'Remembered: Works as a nurse in Leeds; Runs along the canal on Tuesday mornings; Hiking in the Lake District in May',
      ),
      assistant(
        "Thanks, Maya! I've saved those as memories, so I can plan your mornings around your runs and help you get ready for the hike.",
      ),
    ],
  },
  {
    id: 'daily_insight',
    title: 'Your daily message',
    explanation:
      'Every morning Daybook sends a short message written for you: the weather where you are, what is on your connected calendar and summaries of research it has done for you. It draws on what it has learned, so it gets more useful over time.',
    features: ['A personalised daily message', 'Local weather and your calendar', 'Summaries of your research'],
    messages: [
      assistant(DAILY_MESSAGE),
      human("Thanks! I'll run early then, and take a jacket to book club."),
      assistant(
        "Good plan. You'll get a message like this every morning. If you want a break, pause daily messages from your account menu.",
      ),
    ],
  },
  {
    id: 'research',
    title: 'Web research on request',
    explanation:
      'Ask for research and Daybook searches the web, reads what it finds and writes a report: an introduction, the findings and a conclusion, with every source linked so you can check it. Open the report to read it in full.',
    features: ['Web research reports with sources', 'Reports saved to your history'],
    messages: [
      human("Could you research the best time to climb Scafell Pike? I'm going in May."),
      { author: 'assistant', message_type: 'research_report', text: SCAFELL_REPORT, pauseMs: 3500 },
      assistant(
        'Short version: **May is a good choice.** The full report is saved under **History**, so you can find it again before the trip.',
      ),
    ],
  },
  {
    id: 'wrap_up',
    title: 'Memories you control',
    explanation:
      'Everything Daybook learns becomes a memory on your Memories page. You can see all of them, correct one, delete what you would rather it forgot, and restore a deleted memory if you change your mind.',
    features: ['See and edit every memory', 'Delete or restore memories', 'Self-hosted, invite-only'],
    messages: [
      human("By the way, I've switched my runs to Wednesday evenings."),
      remembered('Remembered: Runs on Wednesday evenings · Forgot: Runs along the canal on Tuesday mornings'),
      assistant(
        'Got it, updated. Everything I remember about you is on your **Memories** page: edit or delete anything there, and restore it if you change your mind.',
      ),
      human('Love that I stay in control. Thanks, Daybook!'),
      assistant('Any time, Maya. See you tomorrow morning!'),
    ],
  },
];
