// Every model call Daybook makes, end to end through the real app, against every provider profile
// of the replay server (tests/helpers/model-replay: recorded framing, recorded refusals): the
// chat's streamed answer and its calendar tool round, learning, research (plan, embeddings, write),
// the daily message and its email, the onboarding's settings, and the tokens counted. What is
// asserted is what the user sees: the full behaviour, or the documented graceful one (no tools:
// the chat answers without them, structured answers come through JSON) — never "unavailable" for a
// model that answers, [object Object], reasoning text, or a silent loss.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TServerEvent, ZMemoryPage, ZResearchReport, ZResourceList } from '@daybook/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSearch, fakeResults, startFakeSearch } from '../../../../../tests/helpers/fake-search.ts';
import { type FakeSite, startFakeSite } from '../../../../../tests/helpers/fake-site.ts';
import { type FakeOpenMeteo, startFakeOpenMeteo } from '../../../../../tests/helpers/fake-weather.ts';
import { chatAnswer, DAILY_TEXT, ONBOARDED } from '../../../../../tests/helpers/model-replay/brain.ts';
import { PROFILES, type Profile, profile } from '../../../../../tests/helpers/model-replay/profiles.ts';
import { streamChunks } from '../../../../../tests/helpers/model-replay/recordings.ts';
import { type ReplayServer, startReplayServer } from '../../../../../tests/helpers/model-replay/server.ts';
import { recordedUsage } from '../../../../../tests/helpers/model-replay/template.ts';
import { connectIcs, signedInUser } from '../../test/factories.ts';
import { type Browser, createTestApp, type TestApp, waitFor } from '../../test/test-app.ts';
import { type Client, connect, type } from '../chat/chat.test-client.ts';

/** How many files share the profiles (model.conformance-1..3.test.ts), so they run side by side. */
export const CONFORMANCE_PARTS = 3;

/** The suite for every CONFORMANCE_PARTS-th profile from `part` (0-based); part 0 also runs the unnamed thinking model. */
export function conformanceSuite(part: number) {
  const ARTICLES = ['/articles/e-bike-commuting', '/articles/battery-care', '/articles/bike-lanes'];
  const METRICS_TOKEN = 'conformance-metrics-token';
  let replay: ReplayServer;
  let site: FakeSite;
  let search: FakeSearch;
  let weather: FakeOpenMeteo;
  let ics: Server;
  let icsUrl = '';

  beforeAll(async () => {
    [replay, site, search, weather] = await Promise.all([
      startReplayServer(),
      startFakeSite(),
      startFakeSearch(),
      startFakeOpenMeteo(),
    ]);
    search.onSearch(() => fakeResults(site.origin, ARTICLES));
    ics = createServer((_req, res) => {
      const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
      res
        .writeHead(200, { 'content-type': 'text/calendar' })
        .end(
          `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Test//EN\r\nBEGIN:VEVENT\r\nUID:d1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:${day}T150000Z\r\nDTEND:${day}T160000Z\r\nSUMMARY:Dentist appointment\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`,
        );
    });
    await new Promise<void>((resolve) => ics.listen(0, '127.0.0.1', resolve));
    icsUrl = `http://127.0.0.1:${(ics.address() as AddressInfo).port}/work.ics`;
  });
  afterAll(async () => {
    await Promise.all([replay?.close(), site?.close(), search?.close(), weather?.close()]);
    await new Promise<void>((resolve) => (ics ? ics.close(() => resolve()) : resolve()));
  });

  /** Words of the profile's recorded reasoning that must never reach a user. */
  function reasoningWords(p: Profile): string | null {
    if (!p.reasoning) return null;
    if (p.reasoning.style === 'empty-think') return '<think>';
    const files = [p.text, p.tools].filter((f): f is string => Boolean(f));
    for (const file of files)
      for (const c of streamChunks(file)) {
        const delta = ((c.choices as Array<Record<string, unknown>> | undefined)?.[0]?.delta ?? {}) as Record<
          string,
          unknown
        >;
        const text = delta.reasoning_content ?? delta.reasoning;
        if (typeof text === 'string' && text.trim().length > 3) return text.trim();
      }
    // Profiles thinking in DeepSeek's recorded words (server.ts).
    return 'weather in San Francisco';
  }

  /** What a user may read: no reasoning, no tags, no serialised objects. */
  function readable(p: Profile, text: string) {
    expect(text).not.toMatch(/\[object Object\]|<\/?think>/);
    const words = reasoningWords(p);
    if (words) expect(text).not.toContain(words);
  }

  const isAnswer = (e: TServerEvent) => e.message_type === 'markdown' && e.author_type === 'assistant';
  const isNotice = (e: TServerEvent) => e.message_type === 'system_message';

  // MODEL_PROFILES=openai,vllm-old runs those only (a developer's loop on one provider).
  const only = process.env.MODEL_PROFILES?.split(',').map((n) => n.trim());
  // A developer's chosen profiles all run in part 0; the other parts then say so.
  const profiles = only
    ? PROFILES.filter((p) => part === 0 && only.includes(p.name))
    : PROFILES.filter((_, i) => i % CONFORMANCE_PARTS === part);
  if (!profiles.length) it.skip(`runs no profile here: MODEL_PROFILES=${only?.join(',')} runs in part 1`, () => {});

  describe.each(profiles)('$name ($about)', (p) => {
    let t: TestApp;
    let wsBase = '';
    // Whether the chat can offer tools (a forced tool call may work where the chat's cannot).
    const tools = !p.refuses?.tools && !p.refuses?.autoTools && !p.refuses?.streamedTools;

    beforeAll(async () => {
      t = await createTestApp(
        {
          LLM_BASE_URL: replay.url(p.name),
          LLM_MODEL: p.model ?? 'replayed-model',
          LLM_MAX_RETRIES: '0',
          EMBEDDING_MODEL: 'embedder',
          SEARXNG_URL: search.searxngUrl,
          SEARCH_PROVIDERS: 'searxng',
          FETCH_ALLOW: '127.0.0.1',
          // The local fake site's pages, on a machine busy with the rest of the suite: a page read late
          // there (3 s was once too short) is not a page the research should skip.
          FETCH_TIMEOUT_MS: '15000',
          WEATHER_PROVIDER: 'open-meteo',
          OPEN_METEO_FORECAST_URL: weather.forecastUrl,
          OPEN_METEO_GEOCODING_URL: weather.geocodingUrl,
          METRICS_ENABLED: 'true',
          METRICS_TOKEN,
        },
        { calendar: { cacheMs: 0 } },
      );
      wsBase = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
    });
    afterAll(() => t?.close());

    async function chatting(browser: Browser, path = '/ws/chat/'): Promise<Client> {
      const c = await connect(wsBase, browser, path);
      await c.next(type('history'));
      return c;
    }

    /** The final answer to `text`, after checking that no notice (unavailable) came instead. */
    async function ask(c: Client, text: string) {
      c.say(text);
      const answer = await c.next((e) => isAnswer(e) || isNotice(e), 15_000);
      expect(answer).toMatchObject({ message_type: 'markdown' });
      if (!('raw_text' in answer)) throw new Error('no text');
      return answer.raw_text;
    }

    it('chat: the streamed answer, as written and nothing else', async () => {
      const { browser } = await signedInUser(t);
      const c = await chatting(browser);
      const answer = await ask(c, 'Hello there');
      expect(answer).toBe(chatAnswer('Hello there'));
      readable(p, answer);
      const streamed = c.events
        .filter((e) => e.message_type === 'stream')
        .map((e) => ('raw_text' in e ? e.raw_text : ''))
        .join('');
      readable(p, streamed);
      c.ws.close();
    });

    it(
      tools
        ? 'chat: a calendar tool round, answered from the events'
        : 'chat: without tools, the question is answered and tools are not offered again',
      async () => {
        const { browser } = await signedInUser(t);
        expect(await connectIcs(browser, icsUrl)).toBe(303);
        const c = await chatting(browser);
        const answer = await ask(c, "What's on my calendar today?");
        readable(p, answer);
        // The chat's requests (learning's are not streamed).
        const last = replay
          .served(p.name)
          .filter((s) => s.request.stream && !s.refusedWith)
          .at(-1)?.request;
        if (tools) {
          expect(answer).toBe('On your calendar: Dentist appointment.');
          // The round went back with the call (and, where the provider wants it, the reasoning).
          const round = last?.messages.find((m) => m.role === 'tool');
          expect(round?.content).toContain('Dentist appointment');
        } else {
          expect(answer).toBe(chatAnswer("What's on my calendar today?"));
          expect(last?.tools).toBeUndefined();
          // The model is not promised tools it cannot call.
          expect(JSON.stringify(last?.messages[0])).toContain('type /research');
        }
        c.ws.close();
      },
    );

    it('learning: what the user says about themselves becomes a memory', async () => {
      const { browser } = await signedInUser(t);
      const c = await chatting(browser);
      c.say('I love climbing');
      const learned = await c.next(type('task_notification_final'), 15_000);
      expect(learned).toMatchObject({ raw_text: 'Remembered: Loves climbing' });
      const memories = ZMemoryPage.parse((await browser.get('/api/memories/')).json());
      expect(memories.results.map((m) => m.data)).toContain('Loves climbing');
      c.ws.close();
    });

    // A whole research (plan, search, read, rank, write) through the replayed provider: on a busy
    // CI machine it has taken 21 s, so its waits fail a stuck pipeline, not a slow one.
    it('research: planned, ranked by embeddings, written with citations', { timeout: 90_000 }, async () => {
      const { browser } = await signedInUser(t);
      const c = await chatting(browser);
      c.say('/research e-bikes for commuting');
      const message = await c.next((e) => e.message_type === 'research_report' || isNotice(e), 60_000);
      expect(message, JSON.stringify(message)).toMatchObject({ message_type: 'research_report' });
      const report = ZResearchReport.parse(JSON.parse('raw_text' in message ? message.raw_text : '{}'));
      expect(report.introduction).toBe('Commuting by e-bike is growing [1].');
      expect(report.sources).toHaveLength(ARTICLES.length);
      readable(p, `${report.introduction}${report.report}${report.conclusion}`);
      // The planned queries were searched, and passages ranked by the endpoint's embeddings (as floats).
      expect(search.requests.map((r) => r.query)).toContain('e-bike battery care');
      expect(replay.embeddings(p.name).at(-1)).toMatchObject({ encoding_format: 'float' });
      c.ws.close();
    });

    it('daily message: the model writes it; the chat and the email carry that text only', {
      timeout: 60_000,
    }, async () => {
      const { browser, email } = await signedInUser(t);
      expect((await browser.post('/api/daily-messages/send-now/')).statusCode).toBe(202);
      const mail = await t.smtp.waitFor(email, { subject: /^Your daily message for /, timeoutMs: 20_000 });
      expect(mail.text).toContain('A calm day ahead.');
      readable(p, mail.text);
      readable(p, mail.html ?? '');
      const list = ZResourceList.parse((await browser.get('/api/resources/')).json());
      const daily = list.find((r) => r.resource_type === 'daily_message');
      const detail = (await browser.get(`/api/daily-messages/${daily?.id}/`)).json() as { message_text: string };
      expect(detail.message_text).toBe(DAILY_TEXT);
    });

    it('onboarding: the interview ends, and its answers become the daily settings', { timeout: 60_000 }, async () => {
      const { browser } = await signedInUser(t);
      const c = await chatting(browser, '/ws/onboarding/');
      const answer = await ask(c, 'I live in Lisbon');
      expect(answer).toBe(ONBOARDED);
      const me = await waitFor(
        'the settings from the onboarding',
        async () => {
          const body = (await browser.get('/api/users/me/')).json() as {
            time_zone?: string;
            daily_message_time?: string;
          };
          return body.time_zone === 'Europe/Lisbon' ? body : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 50 },
      );
      expect(me).toMatchObject({ time_zone: 'Europe/Lisbon', daily_message_time: '07:30' });
      c.ws.close();
    });

    it('tokens: counted wherever the provider reports them', async () => {
      const res = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      const prompt = Number(
        res.body.match(/daybook_model_tokens_total\{operation="chat",type="prompt"\} (\d+)/)?.[1] ?? '0',
      );
      const reported = recordedUsage(streamChunks(p.text)) ?? recordedUsage(streamChunks(p.tools ?? p.text));
      // Reported when the recording carries usage and the request may ask for it (or it comes anyway).
      const delivered = Boolean(reported) && (!p.refuses?.streamOptions || p.usage === 'always');
      expect(prompt > 0).toBe(delivered);
      // And no answer was ever the unavailable notice.
      expect(res.body).not.toMatch(/daybook_chat_turns_total\{outcome="model_error"\} [1-9]/);
    });
  });

  if (part !== 0) return;
  describe('a thinking model not known by name, on vLLM without a reasoning parser', () => {
    const p = profile('vllm-no-parser');
    let t: TestApp;
    let wsBase = '';
    beforeAll(async () => {
      t = await createTestApp({
        LLM_BASE_URL: replay.url(p.name),
        LLM_MODEL: 'house-finetune-v2',
        LLM_MAX_RETRIES: '0',
      });
      wsBase = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
    });
    afterAll(() => t?.close());

    const streamed = (c: Client, from: number) =>
      c.events
        .slice(from)
        .filter((e) => e.message_type === 'stream')
        .map((e) => ('raw_text' in e ? e.raw_text : ''))
        .join('');

    it('the first answer shows its reasoning until </think>, then keeps only the answer; later ones never show it', async () => {
      const { browser } = await signedInUser(t);
      const c = await connect(wsBase, browser);
      await c.next(type('history'));
      c.say('Hello there');
      const first = await c.next(isAnswer, 15_000);
      // Streamed at once (nothing said to hold it back), taken back when the closing tag came.
      expect('raw_text' in first && first.raw_text).toBe(chatAnswer('Hello there'));
      const stored = (await browser.get('/api/chat/messages/')).json() as { results?: Array<{ raw_text: string }> };
      expect(JSON.stringify(stored)).not.toContain('weather in San Francisco');
      const from = c.events.length;
      c.say('And again');
      const second = await c.next(isAnswer, 15_000);
      expect('raw_text' in second && second.raw_text).toBe(chatAnswer('And again'));
      // Held until the reasoning ended: no piece of it reached the tab.
      readable(p, streamed(c, from));
      expect(streamed(c, from)).toBe(chatAnswer('And again'));
      c.ws.close();
    });
  });
}
