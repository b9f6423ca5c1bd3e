// What the calendar module says to people: the providers' names and its failures, in words for the user.
import { CALENDAR_CONNECTIONS_MAX, type TCalendarProviderId } from '@daybook/contracts';

export const PROVIDER_NAMES: Record<TCalendarProviderId, string> = {
  google: 'Google',
  microsoft: 'Microsoft Outlook',
  ics: 'ICS calendar',
};

export const MESSAGES = {
  unknownProvider: 'That calendar provider is not enabled on this Daybook.',
  invalidUrl: "Enter the calendar's address: it starts with https://, http:// or webcal://.",
  refused:
    "Daybook does not read addresses on private or local networks. Use the calendar's public address, or ask whoever runs Daybook to allow this host (FETCH_ALLOW).",
  unreachable: 'Daybook could not reach that address. Check it and try again.',
  notFound: 'That address answered "not found". Check that you copied the whole address.',
  tooLarge: 'That calendar is too large for Daybook to read.',
  duplicate: 'That calendar is already connected.',
  busyAdding: 'Another calendar of yours is being added. Try again when it is done.',
  tooMany: `You can connect at most ${CALENDAR_CONNECTIONS_MAX} calendars. Remove one to add another.`,
  needsReconnect: 'Daybook can no longer read this calendar. Reconnect it on the Calendar Connections page.',
  keyChanged: "Daybook's secret key changed since this calendar was connected. Remove it and connect it again.",
  withdrawn: 'Access to this calendar was withdrawn or has expired. Reconnect it.',
  unavailable: 'Daybook could not read this calendar just now.',
  icsUnreadable: 'Daybook could not read this calendar just now; it will try again later.',
};
