// What the daily message benchmark's worker processes talk to, in a worker thread of its own so its
// traffic (tens of model streams, forecasts and mails a second) does not delay the event loop that
// times the chat turns: an OpenAI-compatible model taking MODEL_MS per call, Open-Meteo, and an
// SMTP server that keeps what it receives. These stand for services on other machines, so on Linux
// the thread runs at the lowest priority: it takes no CPU the server's processes want.

import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { startFakeOpenAI } from '../tests/helpers/fake-openai.ts';
import { startFakeOpenMeteo } from '../tests/helpers/fake-weather.ts';
import { startSmtp } from '../tests/helpers/smtp.ts';

const port = parentPort;
if (!port) throw new Error('run as a worker thread by scripts/bench-daily.ts');
const { modelMs } = workerData as { modelMs: number };
try {
  // This thread only (Linux keeps a priority per thread).
  setPriority(0, 19);
} catch {
  // Not allowed here: the fakes run at normal priority.
}

// About the length the prompt asks for (under 200 words), in four pieces over `modelMs`.
const MESSAGE = `Good morning! Here is your day at a glance.

### Weather
A mild start with some cloud, clearing by the afternoon; take a light jacket for the evening.

### Today
Nothing is on your calendar, so the day is yours: a good one for the reading you mentioned, a long
walk, or finally sorting those photos. If you want a plan, ask me in the chat and we will make one.

Have a good day!`;
const CHUNKS = 4;

const model = await startFakeOpenAI();
model.onChat(() => ({ text: MESSAGE, chunks: CHUNKS, delayMs: modelMs / CHUNKS }));
const weather = await startFakeOpenMeteo();
const smtp = await startSmtp();

port.postMessage({
  type: 'ready',
  llmBaseUrl: model.baseUrl,
  forecastUrl: weather.forecastUrl,
  geocodingUrl: weather.geocodingUrl,
  smtpUrl: smtp.url,
});

port.on('message', async (msg: { type: string }) => {
  if (msg.type === 'counts') {
    const perRecipient = new Map<string, number>();
    for (const m of smtp.messages) perRecipient.set(m.to, (perRecipient.get(m.to) ?? 0) + 1);
    port.postMessage({
      type: 'counts',
      modelCalls: model.requests.length,
      forecasts: weather.requests.filter((r) => r.path === '/v1/forecast').length,
      mails: smtp.messages.length,
      perRecipient: [...perRecipient],
    });
  } else if (msg.type === 'close') {
    await Promise.all([model.close(), weather.close(), smtp.close()]);
    port.close();
  }
});
