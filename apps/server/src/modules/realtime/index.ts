// The realtime bus's public face: how an event reaches every process, the close codes it uses, and
// what account deletion asks of its table.
export type { RealtimeBus, RealtimeEvent } from './realtime.bus.ts';
export { forgetUserEvents } from './realtime.repo.ts';
