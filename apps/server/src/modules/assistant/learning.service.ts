// After each human turn, a separate call makes the model call the tool save_memory_changes with the
// facts to ADD, UPDATE or DELETE among the user's memories; they are applied with provenance.
// Malformed operations are skipped, never fatal; an answer with no operations list fails the call. What users said is theirs: logs above debug carry sizes
// and reasons, never the model's output.
import { MEMORY_TYPES, type TMemoryType } from '@daybook/contracts';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { MemoryRow } from '../memories/index.ts';
import type { MemoriesService } from '../memories/memories.service.ts';
import { UsageLimitError } from '../model/model.errors.ts';
import type { Llm } from '../model/model.types.ts';
import { nothingToLearn } from './learnable.ts';
import { MEMORY_SELECTION } from './prompt.ts';

const TYPES = MEMORY_TYPES.map((t) => t.value) as [TMemoryType, ...TMemoryType[]];

const ZOperation = z.object({
  action: z.enum(['ADD', 'UPDATE', 'DELETE']),
  id: z.number().int().nullable().optional(),
  // Empty strings are fine here (a DELETE needs only its id); ADD and UPDATE check what they use.
  key: z.string().trim().max(200).optional(),
  data: z.string().trim().max(10_000).optional(),
  memory_type: z.enum(TYPES).catch('text').optional(),
  frequency_description: z.string().trim().max(200).nullable().optional(),
});
type Operation = z.infer<typeof ZOperation>;
/** The answer's shape; each operation is checked on its own (see valid). */
const ZExtraction = z.object({ operations: z.array(z.unknown()) });

export const EXTRACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['operations'],
  properties: {
    operations: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['action', 'id', 'key', 'data', 'memory_type', 'frequency_description'],
        properties: {
          action: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE'] },
          id: { type: ['integer', 'null'] },
          key: { type: 'string' },
          data: { type: 'string' },
          memory_type: { type: 'string', enum: TYPES },
          frequency_description: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

const INSTRUCTIONS = `You maintain a list of durable facts about the user (their memories). Read the user's latest message and decide which memories to ADD, UPDATE or DELETE.
- ADD only facts the user states about themselves that stay true for a while: interests, regular activities (with frequency_description, e.g. "every Saturday"), where they live (memory_type "location"), preferences, people in their life, websites to follow, their name and time zone.
- UPDATE (with its id) a memory the message changes. DELETE (with its id) a memory the message says is no longer true, or that the user asks you to forget.
- If the user asks you to remember something, ADD it. Never ADD something already in the list.
- Keys are short labels ("home city", "climbing"); data is a short sentence about the user.
- memory_type is one of: ${TYPES.join(', ')}.
Return {"operations": []} when nothing should change.`;

export interface LearnedChange {
  action: 'ADD' | 'UPDATE' | 'DELETE';
  key: string;
  data: string;
}

/** The message a memory is learned from: its provenance, and where it was said. */
export interface LearnedFrom {
  messageId: number;
  source: 'chat' | 'onboarding';
}

export function createLearningService(deps: { llm: Llm | null; memories: MemoriesService; log: FastifyBaseLogger }) {
  const { llm, memories, log } = deps;

  /** The operations that are well formed; a malformed one is skipped, never the whole answer. */
  function valid(list: unknown[]): Operation[] {
    return list.flatMap((item) => {
      const parsed = ZOperation.safeParse(item);
      if (!parsed.success) {
        // Which fields were wrong, not what they held.
        const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(operation)'))];
        log.warn({ fields }, 'memory extraction: malformed operation, ignored');
      }
      return parsed.success ? [parsed.data] : [];
    });
  }

  async function apply(
    userId: number,
    origin: LearnedFrom,
    ops: Operation[],
    known: MemoryRow[],
  ): Promise<LearnedChange[]> {
    const changes: LearnedChange[] = [];
    const byId = new Map(known.map((m) => [m.id, m]));
    // A memory this message changes now comes from it, wherever it was learned before.
    const provenance = { source: origin.source, sourceMessageId: origin.messageId };
    for (const op of ops) {
      try {
        if (op.action === 'ADD' && op.key && op.data) {
          const same = await memories.findActiveByKey(userId, op.key);
          const data = op.data.toLowerCase();
          if (known.some((m) => m.data.toLowerCase() === data)) continue;
          // "Lives in Lisbon" adds nothing to "Lives in Lisbon, Portugal (Alfama)", which the user may have written.
          if (same?.data.toLowerCase().includes(data)) continue;
          if (same) {
            await memories.update(
              userId,
              same.id,
              { data: op.data, frequency_description: op.frequency_description ?? undefined },
              provenance,
            );
            changes.push({ action: 'UPDATE', key: op.key, data: op.data });
            continue;
          }
          await memories.create(
            userId,
            {
              key: op.key,
              data: op.data,
              memory_type: op.memory_type ?? 'text',
              frequency_description: op.frequency_description ?? null,
            },
            { source: origin.source, sourceMessageId: origin.messageId },
          );
          changes.push({ action: 'ADD', key: op.key, data: op.data });
        } else if (op.action === 'UPDATE' && op.id && byId.has(op.id) && op.data) {
          await memories.update(
            userId,
            op.id,
            {
              data: op.data,
              ...(op.memory_type ? { memory_type: op.memory_type } : {}),
              ...(op.frequency_description !== undefined ? { frequency_description: op.frequency_description } : {}),
            },
            provenance,
          );
          changes.push({ action: 'UPDATE', key: byId.get(op.id)?.key ?? '', data: op.data });
        } else if (op.action === 'DELETE' && op.id && byId.has(op.id)) {
          await memories.remove(userId, op.id, 'Removed by the assistant after a chat message');
          const gone = byId.get(op.id);
          changes.push({ action: 'DELETE', key: gone?.key ?? '', data: gone?.data ?? '' });
        }
      } catch (err) {
        // One bad operation (say, a key clash) must not stop the others.
        log.warn({ err, action: op.action, id: op.id ?? null }, 'memory extraction: operation not applied');
      }
    }
    return changes;
  }

  return {
    /**
     * What the assistant learned from `text`; empty when learning is off or nothing changed. `known`
     * is the memories the reply already selected for this message, which saves reading them again.
     */
    async learn(
      user: { id: number; learnFromChats: boolean },
      origin: LearnedFrom,
      text: string,
      known?: MemoryRow[],
    ): Promise<LearnedChange[]> {
      if (!llm || !user.learnFromChats) return [];
      // Greetings, thanks and the like: nothing to keep, so no model call (see learnable.ts).
      if (nothingToLearn(text)) return [];
      let candidates = known;
      if (!candidates) {
        const { relevant, core, recent } = await memories.select(user.id, text, MEMORY_SELECTION);
        candidates = [...core, ...relevant, ...recent];
      }
      const unique = [...new Map(candidates.map((m) => [m.id, m])).values()];
      const list = unique.map((m) => ({ id: m.id, key: m.key, data: m.data, memory_type: m.memoryType }));
      // Explicit requests ("remember that...", "forget that...") arrive here too.
      const answer = await llm
        .structured({
          messages: [
            { role: 'system', content: INSTRUCTIONS },
            {
              role: 'user',
              content: `Existing memories:\n${JSON.stringify(list)}\n\nThe user's latest message:\n${text}`,
            },
          ],
          name: 'save_memory_changes',
          userId: user.id,
          description: 'Add, update or delete memories about the user.',
          parameters: EXTRACTION_SCHEMA as unknown as Record<string, unknown>,
          schema: ZExtraction,
        })
        // The user's allowance of the day is spent: nothing is learned until it renews.
        .catch((err) => {
          if (err instanceof UsageLimitError) return null;
          throw err;
        });
      if (!answer) return [];
      return apply(user.id, origin, valid(answer.operations), unique);
    },
  };
}

export type LearningService = ReturnType<typeof createLearningService>;

/** "Remembered: lives in Lisbon; Forgot: works at Acme" */
export function describeChanges(changes: LearnedChange[]): string {
  const remembered = changes.filter((c) => c.action !== 'DELETE').map((c) => c.data);
  const forgot = changes.filter((c) => c.action === 'DELETE').map((c) => c.data);
  return [
    remembered.length ? `Remembered: ${remembered.join('; ')}` : '',
    forgot.length ? `Forgot: ${forgot.join('; ')}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}
