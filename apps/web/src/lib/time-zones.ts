// Time zones as this browser knows them: the device's own, the list to pick from, and their canonical names.
import { canonicalZone } from '@daybook/contracts';

/** The device's IANA time zone, or null when the engine does not say. */
export function browserTimeZone(): string | null {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || null;
  } catch {
    return null;
  }
}

/** The spelling the server stores (europe/berlin -> Europe/Berlin; Asia/Kolkata stays), or null for a zone this engine does not know. */
export function canonicalTimeZone(name: string): string | null {
  const zone = name.trim();
  // The server takes at most 64 characters.
  if (!zone || zone.length > 64) return null;
  try {
    return canonicalZone(zone);
  } catch {
    return null;
  }
}

let names: string[] | null = null;

/** Every zone to offer, sorted; V8's list leaves out UTC, which people still look for. */
export function timeZoneNames(): string[] {
  if (names) return names;
  let list: string[] = [];
  try {
    list = Intl.supportedValuesOf('timeZone');
  } catch {
    // Older engines: the field still takes any zone they accept.
  }
  const device = browserTimeZone();
  names = [...new Set([...list, 'UTC', ...(device ? [device] : [])])].sort();
  return names;
}
