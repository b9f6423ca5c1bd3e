// The product API (/api/...) as one table of operations, and the OpenAPI 3.1 document made from it.
// Request and response schemas are the zod contracts the server itself validates with, converted by
// zod's own z.toJSONSchema: the document cannot describe a field the server does not have.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as c from '@daybook/contracts';
import { z } from 'zod';
import { ERROR_STATUS } from '../../lib/errors.ts';
import { CSRF_COOKIE } from '../../plugins/csrf.ts';
import { SESSION_COOKIE } from '../../plugins/session.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** Who may call: anyone, a signed-in user, or a signed-in administrator. */
export type Auth = 'public' | 'user' | 'admin';
type Io = 'input' | 'output';

export interface ApiResponse {
  description: string;
  /** A named component (see COMPONENTS); absent for an empty body. */
  schema?: z.ZodType;
  /** Which side of the schema's transforms the body is (default: output). */
  io?: Io;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface ApiOperation {
  method: Method;
  /** OpenAPI form: /api/memories/{id}/ */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** Path parameters: name and what it names (all are row ids). */
  pathParams?: Record<string, string>;
  /** A z.object of the query string (read as its input). */
  query?: z.ZodObject;
  /** Notes on query parameters the schema cannot say (constraints checked by refinements). */
  queryNotes?: Record<string, string>;
  body?: { schema: z.ZodType; required: boolean; description?: string };
  /** Successful answers by status. */
  responses: Record<number, ApiResponse>;
  /** Error statuses this operation answers besides the ones its auth, body and params imply. */
  errors?: Record<number, string>;
}

/** Every schema the document names, so each appears once under components/schemas. */
export const COMPONENTS = {
  ApiError: c.ZApiError,
  SiteInfo: c.ZSiteInfo,
  ProfileLink: c.ZProfileLink,
  SignupRequest: c.ZSignupRequest,
  SignupResponse: c.ZSignupResponse,
  EmailRequest: c.ZPasswordResetRequest,
  PasswordResetResponse: c.ZPasswordResetResponse,
  ResendVerificationResponse: c.ZResendVerificationResponse,
  InviteLookupResponse: c.ZInviteLookupResponse,
  UserMe: c.ZUserMe,
  UserLocation: c.ZUserLocation,
  UpdateUserMeRequest: c.ZUpdateUserMeRequest,
  AccountExport: c.ZAccountExport,
  DeleteAccountRequest: c.ZDeleteAccountRequest,
  DeleteAccountResponse: c.ZDeleteAccountResponse,
  SkipOnboardingResponse: c.ZSkipOnboardingResponse,
  DailyTime: c.ZDailyTime,
  TemperatureUnit: c.ZTemperatureUnit,
  Invite: c.ZInvite,
  InviteStatus: c.ZInviteStatus,
  InviteList: c.ZInviteList,
  CreateInviteRequest: c.ZCreateInviteRequest,
  CreateInviteResponse: c.ZCreateInviteResponse,
  SendInviteRequest: c.ZSendInviteRequest,
  SendInviteResponse: c.ZSendInviteResponse,
  ModelCheck: c.ZModelCheck,
  ModelCheckItem: c.ZModelCheckItem,
  AdminUser: c.ZAdminUser,
  AdminUserPage: c.ZAdminUserPage,
  UpdateAdminUserRequest: c.ZUpdateAdminUserRequest,
  MemoryType: c.ZMemoryType,
  MemorySource: c.ZMemorySource,
  Memory: c.ZMemory,
  MemoryPage: c.ZMemoryPage,
  MemoryCategory: c.ZMemoryCategory,
  MemoryCategoryList: c.ZMemoryCategories,
  MemoryInput: c.ZMemoryInput,
  MemoryPatch: c.ZMemoryPatch,
  MemoryDelete: c.ZMemoryDelete,
  MemoryExportItem: c.ZMemoryExportItem,
  MemoryExport: c.ZMemoryExport,
  MemoryImport: c.ZMemoryImport,
  MemoryImportResult: c.ZMemoryImportResult,
  AuthorType: c.ZAuthorType,
  MessageType: c.ZMessageType,
  ChatMessage: c.ZChatMessage,
  ChatHistoryPage: c.ZChatHistoryPage,
  ChatSearchPage: c.ZChatSearchPage,
  ChatSearchResult: c.ZChatSearchResult,
  HistoryEvent: c.ZHistoryEvent,
  StreamEvent: c.ZStreamEvent,
  ErrorEvent: c.ZErrorEvent,
  QueuedEvent: c.ZQueuedEvent,
  ServerEvent: c.ZServerEvent,
  ClientMessage: c.ZClientMessage,
  StopRequest: c.ZStopRequest,
  RegenerateRequest: c.ZRegenerateRequest,
  ResearchReport: c.ZResearchReport,
  ResearchStatus: c.ZResearchStatus,
  ResearchSource: c.ZResearchSource,
  ResearchCounts: c.ZResearchCounts,
  Research: c.ZResearch,
  ResourceType: c.ZResourceType,
  ResourceItem: c.ZResourceItem,
  ResourceList: c.ZResourceList,
  DailyMessage: c.ZDailyMessage,
  SendNowResponse: c.ZSendNowResponse,
  CalendarProviderId: c.ZCalendarProviderId,
  CalendarEvent: c.ZCalendarEvent,
  CalendarProblem: c.ZCalendarProblem,
  CalendarDay: c.ZCalendarDay,
  CalendarConnection: c.ZCalendarConnection,
  // The handler answers a bare array of connections; no contract names that array.
  CalendarConnectionList: z.array(c.ZCalendarConnection),
} satisfies Record<string, z.ZodType>;

/**
 * What the contracts say in comments, for readers of the document. Keyed by component and field; a
 * test checks that each still names a field the schema has.
 */
export const FIELD_NOTES: Record<string, Record<string, string>> = {
  ApiError: {
    error: 'A sentence for people.',
    code: 'A stable code for programs; see the table of error codes.',
    field_errors:
      'For validation errors: messages by field name (dotted for nested fields; `non_field_errors` for the request as a whole).',
  },
  UserMe: {
    daily_message_time: 'When the daily message arrives, HH:MM (24-hour) in `time_zone`.',
    time_zone: 'IANA time zone; null until the browser, the onboarding or the user sets one (UTC meanwhile).',
    location: 'Where the weather in the daily message is for.',
    learn_from_chats: 'Whether the assistant saves what it learns from chat messages as memories.',
  },
  UpdateUserMeRequest: {
    time_zone: 'IANA time zone name, e.g. Europe/Berlin; stored with the canonical case.',
    location: 'A place name, geocoded when saved; null or blank clears it.',
  },
  UserLocation: { country_code: 'ISO 3166-1 alpha-2, when the geocoder knows it.' },
  Memory: {
    source: 'Who made it: the user, the assistant in the chat or in onboarding, or an import.',
    source_message_id: 'The message the assistant learned this from, when source is chat or onboarding.',
  },
  MemoryInput: {
    url: 'http:// or https:// address; blank is stored as null.',
    restore_deleted: 'Restores a deleted memory with the same key instead of refusing.',
  },
  MemoryPage: {
    next: 'The next page, or null on the last.',
    previous: 'The previous page, or null on the first.',
  },
  ChatMessage: {
    message_id: 'Stored messages have an id; transient ones (task notifications) have null.',
    timestamp: 'ISO 8601.',
    url: 'Where a redirect message sends the client.',
    stream_id: 'On the final markdown message of a streamed reply: the stream it completes.',
    reply_to: 'On an answer, or a note in its place: the id of the human message it answers.',
  },
  ChatSearchResult: {
    snippet:
      'Plain text around the first match (markdown marks removed, white space collapsed), … where cut; for a research report, of the part that matched.',
    highlights: "Each match in the snippet: [start, end) in UTF-16 code units (JavaScript's string indices).",
  },
  ClientMessage: {
    client_id: "The client's own id for the message; resending it after a reconnect stores it only once.",
  },
  StreamEvent: { raw_text: 'The new text only; append it to what came before.' },
  QueuedEvent: { ahead: 'How many answers come before this one.' },
  Research: {
    report: 'The body (markdown with [n] citations); null until done.',
    error: 'Why it failed, in words for the user; null unless status is failed.',
  },
  ResourceItem: {
    sort_date: "ISO 8601; the list's order and its cursors.",
    title: 'Research: its query. Daily message: its delivery date (YYYY-MM-DD).',
    preview: 'Daily message: the start of its text (at most 150 characters).',
    status: 'Research only.',
  },
  DailyMessage: {
    delivery_date: "The user's local date it is for (YYYY-MM-DD).",
    message_text: 'Markdown.',
    delivered: 'ISO 8601: when it was posted to the chat.',
    chat_message_id: 'The chat message that carries it, once posted.',
  },
  SendNowResponse: { id: "Today's message (being written while status is queued)." },
  CalendarEvent: {
    start: "All-day: the date (YYYY-MM-DD). Otherwise ISO 8601 in the day's time zone, with its offset.",
    end: 'All-day: the day after the last day (exclusive).',
    url: 'The event at the provider, when it has a web page.',
    calendar: "The connection's name.",
  },
  CalendarDay: { events: 'All-day events first, then by start, then by title.' },
  CreateInviteResponse: { token: 'Shown once: lists never include it.' },
};

const ROW_ID = 'The row id. Ids that are not positive integers, unknown ids and other users’ ids all answer 404.';
const JSON_TYPE = 'application/json';

/** The product API. Every route under /api/ is here, and nothing else (docs.routes.test.ts checks both). */
export const OPERATIONS: ApiOperation[] = [
  // ---- Site --------------------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/site/',
    tag: 'Site',
    summary: 'About this installation',
    description: 'Public facts the host configured (the footer and about page show them). Cached for a minute.',
    auth: 'public',
    responses: { 200: { description: 'The site information.', schema: c.ZSiteInfo } },
  },
  // ---- Accounts ----------------------------------------------------------------------------------
  {
    method: 'post',
    path: '/api/auth/signup/',
    tag: 'Accounts',
    summary: 'Sign up with an invite',
    description:
      'Creates an account and signs it in (a session cookie and a new CSRF cookie). The answer is the same whether the address is new or already has an account; `GET /api/users/me/` then tells which.',
    auth: 'public',
    body: { schema: c.ZSignupRequest, required: true },
    responses: { 201: { description: 'A verification email is on its way.', schema: c.ZSignupResponse } },
    errors: { 409: 'Already signed in.', 429: 'Too many attempts from this address.' },
  },
  {
    method: 'get',
    path: '/api/auth/invite/',
    tag: 'Accounts',
    summary: 'Look up the invite a signup link carries',
    description:
      'For the signup page: whether the token can be used now and, for an invite bound to an address, that address (the only one it signs up). Holding the token is the permission; look-ups are limited per client address.',
    auth: 'public',
    query: c.ZInviteLookupQuery,
    responses: { 200: { description: 'The invite can be used.', schema: c.ZInviteLookupResponse } },
    errors: {
      404: 'The token is unknown, used up, expired or revoked (`error` says which).',
      429: 'Too many look-ups from this address.',
    },
  },
  {
    method: 'post',
    path: '/api/auth/password/reset/',
    tag: 'Accounts',
    summary: 'Ask for a password reset email',
    description: 'Addresses without an account get the same answer.',
    auth: 'public',
    body: { schema: c.ZPasswordResetRequest, required: true },
    responses: { 200: { description: 'The email is on its way.', schema: c.ZPasswordResetResponse } },
    errors: { 429: 'Too many attempts.' },
  },
  {
    method: 'post',
    path: '/api/auth/verification/resend/',
    tag: 'Accounts',
    summary: 'Send the verification email again',
    description:
      '`sent: false` when a link went to this address moments ago; `retry_after` is then the seconds until another may be asked for. Addresses without an account get the same answers.',
    auth: 'public',
    body: { schema: c.ZPasswordResetRequest, required: true },
    responses: { 200: { description: 'Sent, or held back for a while.', schema: c.ZResendVerificationResponse } },
    errors: { 429: 'Too many attempts.' },
  },
  {
    method: 'get',
    path: '/api/users/me/',
    tag: 'Accounts',
    summary: 'The signed-in user',
    description: 'The account and its settings.',
    auth: 'user',
    responses: { 200: { description: 'The user.', schema: c.ZUserMe } },
  },
  {
    method: 'patch',
    path: '/api/users/me/',
    tag: 'Accounts',
    summary: "Change the user's settings",
    description:
      'Only the fields sent change. A `location` is looked up with the weather provider when saved: without one configured it is a field error (400), and nothing changes.',
    auth: 'user',
    body: { schema: c.ZUpdateUserMeRequest, required: true },
    responses: { 200: { description: 'The user with the new settings.', schema: c.ZUserMe } },
    errors: { 429: 'Too many place look-ups.', 503: 'The weather provider cannot be reached just now.' },
  },
  {
    method: 'post',
    path: '/api/onboarding/skip/',
    tag: 'Accounts',
    summary: 'Skip the onboarding',
    description:
      'The onboarding screen\'s "Skip for now": ends the interview as a stop word does. Open onboarding tabs get a `redirect` to the chat over their socket, and the chat gets its welcome message. Calling it again changes nothing.',
    auth: 'user',
    responses: { 200: { description: 'The onboarding has ended.', schema: c.ZSkipOnboardingResponse } },
  },
  {
    method: 'get',
    path: '/api/users/me/export/',
    tag: 'Accounts',
    summary: "Download all the user's data",
    description: `One JSON file: the account, memories (deleted ones too), both chat channels, daily messages, researches and calendar connections (never their secrets). At most ${c.ACCOUNT_EXPORTS_PER_HOUR} an hour.`,
    auth: 'user',
    responses: {
      200: {
        description: 'The export file.',
        schema: c.ZAccountExport,
        headers: { 'Content-Disposition': 'attachment; filename="daybook-export-….json"' },
      },
    },
    errors: { 429: 'Asked too often this hour.' },
  },
  {
    method: 'post',
    path: '/api/users/me/delete/',
    tag: 'Accounts',
    summary: 'Delete the account',
    description:
      'After the password: revokes calendar grants, deletes everything the account holds and ends its sessions.',
    auth: 'user',
    body: { schema: c.ZDeleteAccountRequest, required: true },
    responses: { 200: { description: 'Deleted; the session cookie is cleared.', schema: c.ZDeleteAccountResponse } },
    errors: {
      400: 'The password is wrong.',
      403: 'The account has no password to confirm with.',
      409: 'The last administrator cannot delete their account.',
      429: 'Too many wrong passwords.',
    },
  },
  // ---- Invites -----------------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/admin/invites/',
    tag: 'Invites',
    summary: 'List invites',
    auth: 'admin',
    responses: { 200: { description: 'Every invite, newest first.', schema: c.ZInviteList } },
  },
  {
    method: 'post',
    path: '/api/admin/invites/',
    tag: 'Invites',
    summary: 'Create an invite',
    description: 'The token and the signup link are in this answer only.',
    auth: 'admin',
    body: { schema: c.ZCreateInviteRequest, required: false },
    responses: { 201: { description: 'The new invite.', schema: c.ZCreateInviteResponse } },
  },
  {
    method: 'delete',
    path: '/api/admin/invites/{id}/',
    tag: 'Invites',
    summary: 'Revoke an invite',
    description: 'Revoking twice is fine: the answer is the revoked invite.',
    auth: 'admin',
    pathParams: { id: ROW_ID },
    responses: { 200: { description: 'The revoked invite.', schema: c.ZInvite } },
  },
  {
    method: 'post',
    path: '/api/admin/invites/send/',
    tag: 'Invites',
    summary: 'Create an invite and email it',
    description:
      'The invite is bound to the address it is mailed to. Limited per administrator and per address (429 beyond).',
    auth: 'admin',
    body: { schema: c.ZSendInviteRequest, required: true },
    responses: { 201: { description: 'The new invite, and where it was sent.', schema: c.ZSendInviteResponse } },
  },
  {
    method: 'post',
    path: '/api/admin/model-check/',
    tag: 'Model',
    summary: 'Check the configured model',
    description:
      'One probe of each capability Daybook uses (streaming, token usage, reasoning, tools, forced tool calls, JSON schema output, embeddings) against the configured endpoint, what Daybook will use, and what the operator could change. Makes a few model calls; one check runs at a time (a second request gets the same answer). The same report as `npm run check-model`.',
    auth: 'admin',
    responses: { 200: { description: 'The check.', schema: c.ZModelCheck } },
  },
  {
    method: 'get',
    path: '/api/admin/users/',
    tag: 'Users',
    summary: 'List accounts',
    description: 'Newest first, paged; `search` matches the email address.',
    auth: 'admin',
    query: c.ZAdminUserListQuery,
    responses: { 200: { description: 'One page of accounts.', schema: c.ZAdminUserPage } },
  },
  {
    method: 'patch',
    path: '/api/admin/users/{id}/',
    tag: 'Users',
    summary: 'Deactivate, reactivate, or make or remove an administrator',
    description:
      'Deactivating signs the account out everywhere at once. Nobody can deactivate or demote themselves, and one active administrator always remains (400).',
    auth: 'admin',
    pathParams: { id: ROW_ID },
    body: { schema: c.ZUpdateAdminUserRequest, required: true },
    responses: { 200: { description: 'The account as it is now.', schema: c.ZAdminUser } },
  },
  // ---- Memories ----------------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/memories/',
    tag: 'Memories',
    summary: 'List or search memories',
    description: 'Paged with `limit` and `offset`; `next` and `previous` are full links.',
    auth: 'user',
    query: c.ZMemoryListQuery,
    queryNotes: {
      limit: 'A whole number from 1 to 100.',
      offset: 'A whole number, 0 or more.',
      show_deleted: 'true (or 1) lists deleted memories instead of active ones.',
      search: 'Words to look for in keys and data.',
    },
    responses: { 200: { description: 'One page of memories.', schema: c.ZMemoryPage } },
  },
  {
    method: 'post',
    path: '/api/memories/',
    tag: 'Memories',
    summary: 'Create a memory',
    auth: 'user',
    body: { schema: c.ZMemoryInput, required: true },
    responses: { 201: { description: 'The new memory.', schema: c.ZMemory } },
    errors: { 409: 'The account already keeps the most memories it may.' },
  },
  {
    method: 'get',
    path: '/api/memories/categories/',
    tag: 'Memories',
    summary: 'The memory types',
    auth: 'user',
    responses: { 200: { description: 'Each type with its label and description.', schema: c.ZMemoryCategories } },
  },
  {
    method: 'get',
    path: '/api/memories/export/',
    tag: 'Memories',
    summary: 'Export all memories',
    description: 'A file download (`Content-Disposition: attachment`) that `POST /api/memories/import/` takes back.',
    auth: 'user',
    responses: {
      200: {
        description: 'The export file.',
        schema: c.ZMemoryExport,
        io: 'input',
        headers: { 'Content-Disposition': 'attachment; filename="daybook-memories-YYYY-MM-DD.json"' },
      },
    },
    errors: {
      429: "Over 10 exports in an hour, or one of the user's exports is still being sent (`Retry-After` says when to try again).",
    },
  },
  {
    method: 'post',
    path: '/api/memories/import/',
    tag: 'Memories',
    summary: 'Import memories',
    description:
      'An export file, or just its `memories`. Memories with a key the user already has are updated. Uploads up to 20 MB; one import at a time per user.',
    auth: 'user',
    body: { schema: c.ZMemoryImport, required: true },
    responses: { 200: { description: 'What the import did.', schema: c.ZMemoryImportResult } },
    errors: {
      409: 'An import is already running, or this one would go past the most memories an account keeps.',
      413: 'The upload is larger than 20 MB.',
    },
  },
  {
    method: 'get',
    path: '/api/memories/{id}/',
    tag: 'Memories',
    summary: 'One memory',
    auth: 'user',
    pathParams: { id: ROW_ID },
    responses: { 200: { description: 'The memory.', schema: c.ZMemory } },
  },
  {
    method: 'put',
    path: '/api/memories/{id}/',
    tag: 'Memories',
    summary: 'Replace a memory',
    auth: 'user',
    pathParams: { id: ROW_ID },
    body: { schema: c.ZMemoryInput, required: true },
    responses: { 200: { description: 'The memory as saved.', schema: c.ZMemory } },
    errors: { 409: 'The memory is deleted; send restore_deleted to restore it.' },
  },
  {
    method: 'patch',
    path: '/api/memories/{id}/',
    tag: 'Memories',
    summary: 'Change some fields of a memory',
    auth: 'user',
    pathParams: { id: ROW_ID },
    body: { schema: c.ZMemoryPatch, required: true },
    responses: { 200: { description: 'The memory as saved.', schema: c.ZMemory } },
    errors: { 409: 'The memory is deleted; send restore_deleted to restore it.' },
  },
  {
    method: 'delete',
    path: '/api/memories/{id}/',
    tag: 'Memories',
    summary: 'Delete a memory',
    description: 'Deleted memories stay listed with `show_deleted=true` and can be restored.',
    auth: 'user',
    pathParams: { id: ROW_ID },
    body: { schema: c.ZMemoryDelete, required: false, description: 'Optional: why, for the record.' },
    responses: { 204: { description: 'Deleted.' } },
  },
  // ---- Chat --------------------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/chat/messages/',
    tag: 'Chat',
    summary: 'Older chat history',
    description:
      'The socket sends the latest 50 messages when it connects; this pages further back from the oldest one shown.',
    auth: 'user',
    query: c.ZChatHistoryQuery,
    queryNotes: { before: 'Messages older than this message_id.' },
    responses: { 200: { description: 'Oldest first.', schema: c.ZChatHistoryPage } },
  },
  {
    method: 'get',
    path: '/api/chat/search/',
    tag: 'Chat',
    summary: 'Search the chat',
    description:
      "The user's and the assistant's chat messages (daily messages included; research reports by their readable text, never their JSON; not system notes or onboarding) containing `q`, case- and accent-insensitively, newest first. Open one at /chat?message=<message_id>.",
    auth: 'user',
    query: c.ZChatSearchQuery,
    queryNotes: {
      q: 'Taken literally (% and _ are not wildcards); trimmed, 1 to 200 characters.',
      limit: 'From 1 to 50.',
      before: "The next page: results older than this message_id (the last result's).",
    },
    responses: { 200: { description: 'Newest first.', schema: c.ZChatSearchPage } },
  },
  // ---- History -----------------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/resources/',
    tag: 'History',
    summary: 'Daily messages and research reports',
    description: 'Newest first; with `after`, the items newer than that date, oldest of them first.',
    auth: 'user',
    query: c.ZResourcesQuery,
    queryNotes: {
      before: "Items older than this sort_date (the next page). ISO 8601 with an offset, e.g. an item's sort_date.",
      after: 'Items newer than this sort_date. Not together with before.',
    },
    responses: { 200: { description: 'A bare array of items.', schema: c.ZResourceList } },
  },
  {
    method: 'get',
    path: '/api/web-research/{id}/',
    tag: 'History',
    summary: 'One research report',
    auth: 'user',
    pathParams: { id: ROW_ID },
    responses: { 200: { description: 'The research, done or not.', schema: c.ZResearch } },
  },
  {
    method: 'get',
    path: '/api/daily-messages/{id}/',
    tag: 'History',
    summary: 'One daily message',
    auth: 'user',
    pathParams: { id: ROW_ID },
    responses: { 200: { description: 'The daily message.', schema: c.ZDailyMessage } },
  },
  {
    method: 'post',
    path: '/api/daily-messages/send-now/',
    tag: 'History',
    summary: "Send today's daily message now",
    description: `At most ${c.DAILY_SEND_NOW_PER_DAY} times a day. It arrives in the chat when written.`,
    auth: 'user',
    responses: {
      200: { description: "Today's message was already delivered.", schema: c.ZSendNowResponse },
      202: { description: "Today's message is being written.", schema: c.ZSendNowResponse },
    },
    errors: { 429: 'Asked too often today.' },
  },
  // ---- Calendar ----------------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/calendar/events/',
    tag: 'Calendar',
    summary: "A day's events",
    description:
      'Events of every connected calendar on one day. A calendar that cannot be read is listed in `problems` instead of failing the request.',
    auth: 'user',
    query: c.ZCalendarEventsQuery,
    queryNotes: {
      date: 'The day, YYYY-MM-DD.',
      tz: "IANA time zone of the day; defaults to the user's, then UTC.",
    },
    responses: { 200: { description: 'The day.', schema: c.ZCalendarDay } },
  },
  {
    method: 'get',
    path: '/api/calendar/connections/',
    tag: 'Calendar',
    summary: 'Connected calendars',
    description:
      'Never their tokens or ICS addresses. Connecting and removing happen on the Calendar Connections page.',
    auth: 'user',
    responses: { 200: { description: 'The connections.', schema: COMPONENTS.CalendarConnectionList } },
  },
  // ---- Documentation -----------------------------------------------------------------------------
  {
    method: 'get',
    path: '/api/openapi.json',
    tag: 'Documentation',
    summary: 'This document',
    description: 'OpenAPI 3.1, made from the same zod schemas the server validates with.',
    auth: 'public',
    responses: { 200: { description: 'The OpenAPI document.', contentType: JSON_TYPE } },
  },
  {
    method: 'get',
    path: '/api/docs/allauth-openapi.yaml',
    tag: 'Documentation',
    summary: 'The account API’s document',
    description:
      'django-allauth’s headless API document (OpenAPI 3.0, YAML), which the account API at `/_allauth/browser/v1` follows for the `browser` client.',
    auth: 'public',
    responses: { 200: { description: 'allauth’s OpenAPI document.', contentType: 'application/yaml' } },
  },
  {
    method: 'get',
    path: '/api/docs',
    tag: 'Documentation',
    summary: 'This reference as a web page',
    auth: 'public',
    responses: { 200: { description: 'The reference page.', contentType: 'text/html' } },
  },
];

export const TAGS: { name: string; description: string }[] = [
  { name: 'Site', description: 'Public facts about this Daybook.' },
  {
    name: 'Accounts',
    description:
      'The product’s own account calls and the signed-in user’s settings. Signing in and out, passwords, email addresses and connected providers are the account API at `/_allauth/browser/v1`, which follows django-allauth’s headless API (see its own document).',
  },
  { name: 'Invites', description: 'Signing up takes an invite. Administrators only.' },
  {
    name: 'Users',
    description: 'Every account of this installation: deactivate, reactivate, make administrator. Administrators only.',
  },
  { name: 'Model', description: 'The assistant model this installation is configured with. Administrators only.' },
  { name: 'Memories', description: 'What the assistant knows about the user.' },
  {
    name: 'Chat',
    description:
      'The chat itself is a WebSocket (`/ws/chat/`, and `/ws/onboarding/` for the first conversation), described under “WebSocket” since OpenAPI has no sockets; older history comes over HTTP.',
  },
  { name: 'History', description: 'Daily messages and research reports.' },
  { name: 'Calendar', description: 'Events from connected calendars.' },
  { name: 'Documentation', description: 'This reference.' },
];

/** The WebSocket protocol, as an extension of the document (x-websocket). */
export const WEBSOCKET = {
  paths: ['/ws/chat/', '/ws/onboarding/'],
  description:
    'JSON text frames over a WebSocket on the same origin; the session cookie authenticates the upgrade and the Origin must be this site. ' +
    'Right after connecting the server sends a `history` event with the latest 50 messages (and the text so far of answers being written, in `streams`). Each message the client sends is echoed as a stored chat message, then answered: ' +
    '`stream` events carry the answer as it is written, and a final `markdown` message with the same `stream_id` completes it. ' +
    'A client may also send `stop` (the answer being written ends, kept and marked `stopped`) and `regenerate` (a question answered again). ' +
    '`/ws/chat/?dmid=<id>` opens the chat on a daily message, which the answers then have in context.',
  closeCodes: [
    { code: c.CLOSE_CODES.normal, meaning: 'Closed normally.' },
    {
      code: c.CLOSE_CODES.policyViolation,
      meaning: 'Not signed in, or the session ended (sign out, password change): do not reconnect.',
    },
    {
      code: c.CLOSE_CODES.serviceRestart,
      meaning:
        'The server is restarting (a deploy, a shutdown): reconnect at once, to another instance if there is one.',
    },
    {
      code: c.CLOSE_CODES.tryAgainLater,
      meaning: 'Too many messages or connections, or the server is busy: reconnect after a pause.',
    },
  ],
  clientMessage: 'ClientMessage',
  /** Everything a client may send: a message, Stop, Regenerate (the `message_type` tells them apart). */
  clientEvents: ['ClientMessage', 'StopRequest', 'RegenerateRequest'],
  serverEvents: ['ChatMessage', 'HistoryEvent', 'StreamEvent', 'QueuedEvent', 'ErrorEvent'],
} as const;

/** Error codes (lib/errors.ts) a status can carry. */
export function codesForStatus(status: number): string[] {
  return Object.entries(ERROR_STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
}

const SAFE = new Set<Method>(['get']);
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

type Json = Record<string, unknown>;

/** Removes what JSON Schema says by default or zod adds as noise: $schema, $id, safe-integer bounds. */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$id') continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    out[key] = tidy(value);
  }
  return out;
}

function refsIn(node: unknown, into: Set<string>) {
  if (Array.isArray(node)) for (const item of node) refsIn(item, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.add(value.replace('#/components/schemas/', ''));
      else refsIn(value, into);
    }
  }
}

const nameOf = new Map<z.ZodType, string>(Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]));

function componentName(schema: z.ZodType, where: string): string {
  const name = nameOf.get(schema);
  if (!name) throw new Error(`${where}: its schema is not in COMPONENTS, so the document cannot name it`);
  return name;
}

/**
 * The components one side (input or output) needs: every named schema that side can convert, so
 * nested named schemas become $refs, then only those its roots reach.
 */
function componentsFor(io: Io, roots: Set<string>, rename: (name: string) => string): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of Object.entries(COMPONENTS)) {
    try {
      z.toJSONSchema(schema, { io });
    } catch {
      // A transform's output has no JSON Schema; such a schema is only ever read as input.
      continue;
    }
    registry.add(schema, { id: name });
  }
  const all = z.toJSONSchema(registry, { io, uri: (id) => `#/components/schemas/${rename(id)}` }).schemas as Record<
    string,
    Json
  >;
  const keep = new Set<string>();
  const visit = (name: string) => {
    if (keep.has(name)) return;
    const schema = all[name];
    if (!schema) throw new Error(`No ${io} schema for ${name}`);
    keep.add(name);
    const refs = new Set<string>();
    refsIn(schema, refs);
    for (const r of refs) visit([...Object.keys(all)].find((n) => rename(n) === r) ?? r);
  };
  for (const root of roots) visit(root);
  return Object.fromEntries([...keep].map((name) => [rename(name), tidy(all[name]) as Json]));
}

function addFieldNotes(schemas: Record<string, Json>) {
  for (const [component, notes] of Object.entries(FIELD_NOTES)) {
    const properties = schemas[component]?.properties as Record<string, Json> | undefined;
    if (!properties) continue;
    for (const [field, note] of Object.entries(notes)) {
      const property = properties[field];
      if (property) property.description = note;
    }
  }
}

function errorResponse(status: number, reasons: string[]) {
  const codes = codesForStatus(status);
  const codeText = codes.length ? ` Codes: ${codes.map((code) => `\`${code}\``).join(', ')}.` : '';
  return {
    description: `${reasons.join(' ')}${codeText}`,
    content: { [JSON_TYPE]: { schema: ref('ApiError') } },
    'x-codes': codes,
  };
}

/** The error statuses an operation answers, each with why. */
export function errorsOf(op: ApiOperation): Map<number, string[]> {
  const errors = new Map<number, string[]>();
  const add = (status: number, why: string) => errors.set(status, [...(errors.get(status) ?? []), why]);
  if (op.body || op.query) add(400, 'A field is invalid (`field_errors` says which), or the body is not JSON.');
  if (op.auth !== 'public') add(401, 'No session.');
  if (op.auth === 'admin') add(403, 'The user is not an administrator.');
  if (!SAFE.has(op.method)) add(403, 'The CSRF token is missing or wrong.');
  if (op.pathParams) add(404, 'No such item of this user.');
  for (const [status, why] of Object.entries(op.errors ?? {})) add(Number(status), why);
  return new Map([...errors].sort(([a], [b]) => a - b));
}

function buildOperation(op: ApiOperation, name: (schema: z.ZodType, io: Io, where: string) => string): Json {
  const where = `${op.method.toUpperCase()} ${op.path}`;
  const parameters: Json[] = [];
  for (const [param, description] of Object.entries(op.pathParams ?? {}))
    parameters.push({ name: param, in: 'path', required: true, description, schema: { type: 'integer', minimum: 1 } });
  if (op.query) {
    const query = tidy(z.toJSONSchema(op.query, { io: 'input' })) as Json;
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [param, schema] of Object.entries((query.properties ?? {}) as Record<string, Json>)) {
      const note = op.queryNotes?.[param];
      parameters.push({
        name: param,
        in: 'query',
        required: required.has(param),
        ...(note ? { description: note } : {}),
        schema,
      });
    }
  }
  const responses: Json = {};
  for (const [status, response] of Object.entries(op.responses)) {
    const contentType = response.contentType ?? JSON_TYPE;
    responses[status] = {
      description: response.description,
      ...(response.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(response.headers).map(([header, example]) => [
                header,
                { schema: { type: 'string' }, example },
              ]),
            ),
          }
        : {}),
      ...(response.schema
        ? { content: { [contentType]: { schema: ref(name(response.schema, response.io ?? 'output', where)) } } }
        : response.contentType
          ? { content: { [contentType]: {} } }
          : {}),
    };
  }
  for (const [status, reasons] of errorsOf(op)) responses[status] = errorResponse(status, reasons);
  const security =
    op.auth === 'public'
      ? SAFE.has(op.method)
        ? []
        : [{ csrfToken: [] }]
      : [SAFE.has(op.method) ? { sessionCookie: [] } : { sessionCookie: [], csrfToken: [] }];
  return {
    operationId: operationId(op),
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required,
            ...(op.body.description ? { description: op.body.description } : {}),
            content: { [JSON_TYPE]: { schema: ref(name(op.body.schema, 'input', where)) } },
          },
        }
      : {}),
    responses,
    security,
    'x-daybook-auth': op.auth,
  };
}

/** A stable id from the method and path: get /api/memories/{id}/ → getMemoriesById. */
export function operationId(op: Pick<ApiOperation, 'method' | 'path'>): string {
  const words = op.path
    .replace(/^\/api\//, '')
    .split(/[/._-]+/)
    .filter(Boolean)
    .map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part))
    .flatMap((part) => part.split('-'));
  return [op.method, ...words].map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

const VERSION = (
  JSON.parse(readFileSync(path.join(import.meta.dirname, '../../../package.json'), 'utf8')) as { version: string }
).version;

/** allauth's own document, which the account API follows (allauth serves its copy at /_allauth/openapi.yaml). */
export const ALLAUTH_DOCUMENT_PATH = '/api/docs/allauth-openapi.yaml';
export const ACCOUNT_API_BASE = '/_allauth/browser/v1';

/** Builds the document. Throws when the table names a schema it cannot convert. */
export function buildOpenApiDocument(operations: ApiOperation[] = OPERATIONS): Json {
  // Which components each side needs: requests are read as input, responses as output (or as marked).
  const roots: Record<Io, Set<string>> = { input: new Set(), output: new Set(['ApiError']) };
  for (const op of operations) {
    const where = `${op.method.toUpperCase()} ${op.path}`;
    if (op.body) roots.input.add(componentName(op.body.schema, where));
    for (const response of Object.values(op.responses))
      if (response.schema) roots[response.io ?? 'output'].add(componentName(response.schema, where));
  }
  for (const event of WEBSOCKET.clientEvents) roots.input.add(event);
  for (const event of WEBSOCKET.serverEvents) roots.output.add(event);
  roots.output.add('ServerEvent');

  const output = componentsFor('output', roots.output, (n) => n);
  // A schema read both ways whose input differs (defaults, transforms) gets a second component.
  const plainInput = componentsFor('input', roots.input, (n) => n);
  const differs = new Set(
    Object.keys(plainInput).filter((n) => output[n] && JSON.stringify(output[n]) !== JSON.stringify(plainInput[n])),
  );
  const inputName = (n: string) => (differs.has(n) ? `${n}Input` : n);
  const input = differs.size ? componentsFor('input', roots.input, inputName) : plainInput;
  const schemas: Record<string, Json> = { ...output, ...input };
  addFieldNotes(schemas);
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((n) => [n, schemas[n] as Json]),
  );

  const name = (schema: z.ZodType, io: Io, where: string) => {
    const n = componentName(schema, where);
    return io === 'input' ? inputName(n) : n;
  };
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    paths[op.path] ??= {};
    (paths[op.path] as Json)[op.method] = buildOperation(op, name);
  }

  const usedTags = new Set(operations.map((op) => op.tag));
  return {
    openapi: '3.1.1',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Daybook API',
      version: VERSION,
      summary: 'The product API of a Daybook server: memories, history, calendar, settings and invites.',
      description:
        'JSON over HTTPS on the same origin as the web app. Every error has one shape (`ApiError`). ' +
        `Signed-in calls carry the \`${SESSION_COOKIE}\` cookie; unsafe methods also send the \`${CSRF_COOKIE}\` cookie's value in the \`X-CSRFToken\` header and, from browsers, an Origin of this site. ` +
        `Signing in, out and up, passwords and email addresses are the account API at \`${ACCOUNT_API_BASE}\`, which follows django-allauth's headless API: its OpenAPI document is at \`${ALLAUTH_DOCUMENT_PATH}\`. ` +
        'The chat is a WebSocket, described in `x-websocket`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'This server' }],
    tags: TAGS.filter((t) => usedTags.has(t.name)),
    externalDocs: {
      description: "The account API: django-allauth's headless OpenAPI document",
      url: ALLAUTH_DOCUMENT_PATH,
    },
    paths,
    components: {
      schemas: sorted,
      securitySchemes: {
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: `Set when signing in through the account API (${ACCOUNT_API_BASE}/auth/login).`,
        },
        csrfToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRFToken',
          description: `The value of the \`${CSRF_COOKIE}\` cookie (any GET to ${ACCOUNT_API_BASE}/config sets it), required on every POST, PUT, PATCH and DELETE.`,
        },
      },
    },
    'x-websocket': {
      paths: WEBSOCKET.paths,
      description: WEBSOCKET.description,
      closeCodes: WEBSOCKET.closeCodes,
      clientMessage: ref(inputName(WEBSOCKET.clientMessage)),
      clientEvents: WEBSOCKET.clientEvents.map((n) => ref(inputName(n))),
      serverEvents: WEBSOCKET.serverEvents.map(ref),
    },
    'x-error-codes': Object.entries(ERROR_STATUS).map(([code, status]) => ({ code, status })),
  };
}

let cached: Json | undefined;
/** The document, built once. */
export function openApiDocument(): Json {
  cached ??= buildOpenApiDocument();
  return cached;
}
