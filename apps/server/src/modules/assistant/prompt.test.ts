import { describe, expect, it } from 'vitest';
import type { MemoryRow } from '../memories/memories.repo.ts';
import { BUDGET, buildPrompt, timeZoneOf, tokens } from './prompt.ts';

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
  const row = (i: number, data: string): MemoryRow => ({
    id: i,
    userId: 1,
    key: `fact ${i}`,
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

  it('gives the date and time in the user’s zone, the memories and the conversation', () => {
    const [system, ...window] = buildPrompt({
      onboarding: false,
      now,
      timeZone: 'Asia/Tokyo',
      memories: [row(1, 'Likes bouldering')],
      conversation: [
        { authorType: 'human', rawText: 'Hi' },
        { authorType: 'system', rawText: 'The assistant is unavailable' },
        { authorType: 'assistant', rawText: 'Hello!' },
        { authorType: 'human', rawText: 'What should I do tonight?' },
      ],
    });
    expect(system?.content).toContain('Sunday, 22 November 2026 at 03:30 (Asia/Tokyo)');
    expect(system?.content).toContain('- fact 1: Likes bouldering (interest)');
    expect(window).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'What should I do tonight?' },
    ]);
  });

  it('holds memories and conversation to their budgets, keeping the newest message', () => {
    const long = 'x'.repeat(2000);
    const [system, ...window] = buildPrompt({
      onboarding: false,
      now,
      timeZone: 'UTC',
      memories: Array.from({ length: 500 }, (_, i) => row(i, `Fact number ${i} about the user`)),
      conversation: Array.from({ length: 40 }, (_, i) => ({ authorType: 'human', rawText: `${i} ${long}` })),
    });
    expect(tokens(system?.content ?? '')).toBeLessThan(BUDGET.memories + 200);
    expect(window.reduce((n, m) => n + tokens(m.content), 0)).toBeLessThanOrEqual(BUDGET.conversation);
    expect(window.at(-1)?.content.startsWith('39 ')).toBe(true);
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
      memories: [],
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
