import { describe, expect, it } from 'vitest';
import type { MemoryRow } from '../memories/memories.repo.ts';
import type { LlmMessage } from '../model/model.types.ts';
import { BUDGET, buildChatPrompt, buildPrompt, type PromptInput, timeZoneOf, tokens } from './prompt.ts';

const memory = (key: string, data: string, memoryType = 'text') => ({ key, data, memoryType });

describe('timeZoneOf', () => {
  it('reads an IANA name from a time zone memory', () => {
    expect(timeZoneOf([memory('time zone', 'Europe/Lisbon')])).toBe('Europe/Lisbon');
    expect(timeZoneOf([memory('timezone', 'They are on America/Argentina/Buenos_Aires time')])).toBe(
      'America/Argentina/Buenos_Aires',
    );
  });

  it('finds the zone of a city named in a time zone or location memory', () => {
    expect(timeZoneOf([memory('time zone', 'Same as Tokyo')])).toBe('Asia/Tokyo');
    expect(timeZoneOf([memory('home city', 'Lives in Lisbon', 'location')])).toBe('Europe/Lisbon');
    expect(timeZoneOf([memory('home', 'Moved to New York last year', 'location')])).toBe('America/New_York');
  });

  it('prefers an explicit time zone over a location', () => {
    expect(timeZoneOf([memory('home city', 'Lives in Lisbon', 'location'), memory('time zone', 'Europe/Berlin')])).toBe(
      'Europe/Berlin',
    );
  });

  it('falls back to UTC when nothing names a zone', () => {
    expect(timeZoneOf([])).toBe('UTC');
    expect(timeZoneOf([memory('time zone', 'Not/AZone'), memory('climbing', 'Climbs in Paris')])).toBe('UTC');
  });
});

describe('buildPrompt', () => {
  const now = new Date('2026-11-21T18:30:00Z');
  const row = (i: number, data: string, key = `fact ${i}`): MemoryRow => ({
    id: i,
    userId: 1,
    key,
    data,
    memoryType: 'interest',
    url: null,
    frequencyDescription: null,
    source: 'manual',
    sourceMessageId: null,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
    deletedReason: null,
  });
  const none = { core: [], relevant: [], recent: [] };
  const systemText = (prompt: LlmMessage[]) =>
    prompt
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');

  it('gives the date and time in the user’s zone, the memories and the conversation', () => {
    const prompt = buildPrompt({
      onboarding: false,
      now,
      timeZone: 'Asia/Tokyo',
      memories: { core: [row(2, 'Lives in Lisbon', 'home city')], relevant: [row(1, 'Likes bouldering')], recent: [] },
      conversation: [
        { authorType: 'human', rawText: 'Hi' },
        { authorType: 'system', rawText: 'The assistant is unavailable' },
        { authorType: 'assistant', rawText: 'Hello!' },
        { authorType: 'human', rawText: 'What should I do tonight?' },
      ],
    });
    const system = systemText(prompt);
    expect(system).toContain('Sunday, 22 November 2026 at 03:30 (Asia/Tokyo)');
    expect(system).toContain('- home city: Lives in Lisbon (interest)');
    expect(system).toContain('- fact 1: Likes bouldering (interest)');
    expect(prompt.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'What should I do tonight?' },
    ]);
  });

  it('puts what changes every turn last, just before the message being answered', () => {
    const prompt = buildPrompt({
      onboarding: false,
      now,
      timeZone: 'UTC',
      memories: { core: [row(2, 'Lives in Lisbon', 'home city')], relevant: [row(1, 'Likes bouldering')], recent: [] },
      conversation: [
        { authorType: 'human', rawText: 'Hi' },
        { authorType: 'assistant', rawText: 'Hello!' },
        { authorType: 'human', rawText: 'Any climbing tips?' },
      ],
      dailyMessage: { date: '2026-11-21', text: 'Good morning!' },
    });
    expect(prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'system', 'user']);
    // The first message holds the persona and core memories: nothing that changes turn to turn.
    expect(prompt[0]?.content).toContain('Lives in Lisbon');
    expect(prompt[0]?.content).not.toMatch(/2026|bouldering|Good morning/);
    expect(prompt[3]?.content).toMatch(/Current date and time for the user: .*2026/);
    expect(prompt[3]?.content).toContain('- fact 1: Likes bouldering');
    expect(prompt[3]?.content).toContain('Good morning!');
  });

  it('holds memories and conversation to their budgets, keeping the newest message', () => {
    const long = 'x'.repeat(2000);
    const memories = Array.from({ length: 500 }, (_, i) => row(i, `Fact number ${i} about the user`));
    const prompt = buildPrompt({
      onboarding: false,
      now,
      timeZone: 'UTC',
      memories: { core: memories.slice(0, 8), relevant: memories.slice(8, 20), recent: memories.slice(20) },
      conversation: Array.from({ length: 40 }, (_, i) => ({ authorType: 'human', rawText: `${i} ${long}` })),
    });
    expect(tokens(systemText(prompt))).toBeLessThan(BUDGET.memories + 200);
    const window = prompt.filter((m) => m.role !== 'system');
    expect(window.reduce((n, m) => n + tokens(m.content), 0)).toBeLessThanOrEqual(BUDGET.conversation);
    expect(window.at(-1)?.content.startsWith('39 ')).toBe(true);
  });

  it('keeps the prompt of the turn before as its prefix for most turns of a long conversation', () => {
    const core = [row(3, 'Lives in Lisbon', 'home city'), row(1, 'Called Ana', 'name')];
    const stored: Array<PromptInput['conversation'][number] & { id: number }> = [];
    let previous: LlmMessage[] = [];
    let shared = 0;
    const moves: number[] = [];
    for (let turn = 0; turn < 60; turn++) {
      stored.push({ id: 1000 + turn * 2, authorType: 'human', rawText: `Question ${turn}: ${'words '.repeat(30)}` });
      const read = stored.slice(-40);
      const { messages: prompt, windowMovedTo } = buildChatPrompt({
        onboarding: false,
        now: new Date(now.getTime() + turn * 60_000),
        timeZone: 'UTC',
        // Core memories arrive in any order (newest first from the database); other memories change.
        memories: { core: turn % 2 ? core : [...core].reverse(), relevant: [row(100 + turn, 'Topic')], recent: [] },
        conversation: read,
        wholeConversation: read.length === stored.length,
        maxMessages: 40,
      });
      const window = prompt.filter((m) => m.role !== 'system');
      expect(window.reduce((n, m) => n + tokens(m.content), 0)).toBeLessThanOrEqual(BUDGET.conversation);
      if (windowMovedTo !== null) {
        moves.push(turn);
        // What stays leaves at least a quarter of the budget free for the turns to come.
        expect(window.slice(0, -1).reduce((n, m) => n + tokens(m.content), 0)).toBeLessThanOrEqual(
          BUDGET.conversation * 0.75,
        );
        const marked = stored.find((m) => m.id === windowMovedTo);
        if (marked) marked.windowStart = true;
      }
      // The turn before's prompt but its last two messages (the volatile note and its question) is
      // where this one starts, unchanged; then come that question and its answer.
      const head = previous.slice(0, -2);
      if (turn > 0 && JSON.stringify(prompt.slice(0, head.length)) === JSON.stringify(head)) shared++;
      previous = prompt;
      stored.push({ id: 1001 + turn * 2, authorType: 'assistant', rawText: `Answer ${turn}: ${'more '.repeat(120)}` });
    }
    // The window moved on several times, each time far enough to stay put for the next turns.
    expect(moves.length).toBeGreaterThan(3);
    expect(shared).toBe(59 - moves.length);
    expect(shared).toBeGreaterThanOrEqual(45);
  });

  it('keeps a conversation that fits whole, and starts no window in it', () => {
    const conversation = [
      { id: 1, authorType: 'human', rawText: 'Hi' },
      { id: 2, authorType: 'assistant', rawText: 'Hello!' },
      { id: 3, authorType: 'human', rawText: 'How are you?' },
    ];
    const { messages, windowMovedTo } = buildChatPrompt({
      onboarding: false,
      now,
      timeZone: 'UTC',
      memories: none,
      conversation,
      wholeConversation: true,
      maxMessages: 40,
    });
    expect(messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual(['Hi', 'Hello!', 'How are you?']);
    expect(windowMovedTo).toBeNull();
  });

  it('starts at the marked message while everything from it fits, and moves on by a quarter when not', () => {
    const conversation = Array.from({ length: 12 }, (_, i) => ({
      id: 500 + i,
      authorType: i % 2 ? 'assistant' : 'human',
      rawText: `Message ${i} ${'x'.repeat(1000)}`,
      windowStart: i === 3,
    }));
    const input = { onboarding: false, now, timeZone: 'UTC', memories: none, maxMessages: 40 };
    // 9 messages of 253 tokens from the marked one: they fit the 3000 tokens.
    const kept = buildChatPrompt({ ...input, conversation });
    expect(kept.windowMovedTo).toBeNull();
    expect(kept.messages[1]?.content.startsWith('Message 3 ')).toBe(true);
    // Three more (12 from the mark) do not: the new start leaves a quarter of the budget free.
    const more = [
      ...conversation,
      ...[12, 13, 14].map((i) => ({ id: 500 + i, authorType: 'human', rawText: `Message ${i} ${'x'.repeat(1000)}` })),
    ];
    const moved = buildChatPrompt({ ...input, conversation: more });
    expect(moved.windowMovedTo).toBe(507);
    expect(moved.messages[1]?.content.startsWith('Message 7 ')).toBe(true);
  });
});

describe('research in the prompt', () => {
  it('tells the model about research only when it is available, and shows reports in brief', () => {
    const report = JSON.stringify({
      query: 'e-bikes',
      introduction: 'E-bikes are popular [1].',
      report: 'x'.repeat(5000),
      conclusion: 'Ride on.',
      sources: [{ url: 'https://a.example', title: 'A' }],
    });
    const input = {
      onboarding: false,
      now: new Date('2026-11-24T08:00:00Z'),
      timeZone: 'UTC',
      memories: { core: [], relevant: [], recent: [] },
      conversation: [
        { authorType: 'assistant', rawText: report, messageType: 'research_report' },
        { authorType: 'human', rawText: 'Thanks! And batteries?' },
      ],
    };
    const withResearch = buildPrompt({ ...input, research: true });
    expect(withResearch[0]?.content).toContain('call the web_research tool');
    expect(withResearch[1]?.content).toBe(
      '(Web research report on "e-bikes", summarising web pages)\n\nE-bikes are popular [1].\n\nRide on.',
    );
    expect(buildPrompt(input)[0]?.content).not.toContain('web_research');
  });
});
