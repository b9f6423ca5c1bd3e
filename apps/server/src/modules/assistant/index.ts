// The assistant's public face: how a chat prompt is written, and what it needs from memories.
export { buildChatPrompt, MEMORY_SELECTION, ONBOARDING_DONE, timeZoneOf } from './prompt.ts';
