// npm run check-model: one probe of each capability Daybook uses (streaming, usage, reasoning,
// tools, forced tool calls, JSON schema output, embeddings) against LLM_BASE_URL / LLM_MODEL,
// what Daybook will use, and what could be changed on the model server. Exits 1 when the chat or
// its structured answers cannot work.
import { loadConfig } from '../apps/server/src/config.ts';
import { checkModel } from '../apps/server/src/modules/model/model.probe.ts';
import { formatModelCheck } from '../apps/server/src/modules/model/model.report.ts';
import { runCli } from './lib/cli-context.ts';

await runCli(async () => {
  const config = loadConfig();
  const check = await checkModel(config.llm, config.research.embeddingModel);
  console.log(formatModelCheck(check));
  return check.ok ? 0 : 1;
});
