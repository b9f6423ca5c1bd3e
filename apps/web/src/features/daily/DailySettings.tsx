// The daily message settings on the profile page: when it comes, in which time zone, where the weather is
// for, in which units, whether it is emailed too, and "Send today's message now".
import {
  DAILY_MESSAGES,
  DAILY_SEND_NOW_PER_DAY,
  LOCATION_NAME_MAX,
  type TTemperatureUnit,
  type TUpdateUserMeRequest,
  type TUserMe,
  ZDailyTime,
} from '@daybook/contracts';
import { type FormEvent, type KeyboardEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { ApiError, serverFieldErrors, serverMessage } from '../../lib/api.ts';
import { browserTimeZone, canonicalTimeZone, timeZoneNames } from '../../lib/time-zones.ts';
import { updateMe } from '../auth/api.ts';
import { SETTINGS_UPDATE_FAILED, SettingSwitch } from '../auth/daily-pause.tsx';
import { sendDailyMessageNow } from './api.ts';

export const SEND_NOW_QUEUED = 'Your message is being written; it will appear in your chat.';
export const SEND_NOW_DELIVERED = "Today's message was already delivered.";
export const SEND_NOW_FAILED = "We could not ask for today's message. Please try again.";
export const TIME_ZONE_UNKNOWN = 'Choose a time zone from the list, e.g. Europe/Berlin.';

/** A time typed or picked, then left alone this long, is saved without waiting for the field to lose focus. */
const TIME_SAVE_DELAY_MS = 1500;

type DailyField = 'daily_message_time' | 'time_zone' | 'location' | 'temperature_unit' | 'daily_message_email';
type DailyValues = Pick<TUserMe, DailyField>;

const UNITS: { value: TTemperatureUnit; label: string }[] = [
  { value: 'auto', label: 'Auto' },
  { value: 'celsius', label: '°C' },
  { value: 'fahrenheit', label: '°F' },
];

/** Saves one setting at a time per field: shown at once where it can be, put back as the server last had it on failure. */
function useDailySettings(user: TUserMe) {
  const [values, setValues] = useState<DailyValues>(() => pick(user));
  const [errors, setErrors] = useState<Partial<Record<DailyField, string>>>({});
  const [busy, setBusy] = useState<Partial<Record<DailyField, boolean>>>({});
  const [status, setStatus] = useState('');
  /** What the server last confirmed, to go back to when a save fails. */
  const confirmed = useRef<DailyValues>(values);
  /** Only the newest save of a field may show its outcome: an older answer can arrive after it. */
  const latest = useRef<Partial<Record<DailyField, number>>>({});

  const setError = useCallback((field: DailyField, message: string | undefined) => {
    setErrors((current) => ({ ...current, [field]: message }));
  }, []);

  const save = useCallback(
    async <K extends DailyField>(
      field: K,
      body: TUpdateUserMeRequest,
      { shown, done }: { shown?: DailyValues[K]; done: (me: TUserMe) => string },
    ): Promise<TUserMe | null> => {
      const request = (latest.current[field] ?? 0) + 1;
      latest.current[field] = request;
      const isLatest = () => latest.current[field] === request;
      if (shown !== undefined) setValues((current) => ({ ...current, [field]: shown }));
      setError(field, undefined);
      setBusy((current) => ({ ...current, [field]: true }));
      setStatus('');
      try {
        const me = await updateMe(body);
        confirmed.current = { ...confirmed.current, [field]: me[field] };
        if (isLatest()) {
          setValues((current) => ({ ...current, [field]: me[field] }));
          setStatus(done(me));
        }
        return me;
      } catch (err) {
        if (isLatest()) {
          setValues((current) => ({ ...current, [field]: confirmed.current[field] }));
          setError(field, failureText(field, err));
        }
        return null;
      } finally {
        if (isLatest()) setBusy((current) => ({ ...current, [field]: false }));
      }
    },
    [setError],
  );

  return { values, errors, busy, status, save, setError };
}

function pick(user: TUserMe): DailyValues {
  const { daily_message_time, time_zone, location, temperature_unit, daily_message_email } = user;
  return { daily_message_time, time_zone, location, temperature_unit, daily_message_email };
}

/** The spec's failure text, except where the server says what was wrong with the place. */
function failureText(field: DailyField, err: unknown): string {
  if (field !== 'location') return SETTINGS_UPDATE_FAILED;
  return serverFieldErrors(err, ['location']).location ?? SETTINGS_UPDATE_FAILED;
}

const describedBy = (...ids: (string | false | undefined)[]) => ids.filter(Boolean).join(' ') || undefined;

export function DailySettings({ user }: { user: TUserMe }) {
  const settings = useDailySettings(user);
  const { values, status } = settings;
  return (
    <div className="daily-settings">
      <DeliveryTime settings={settings} />
      <TimeZoneField settings={settings} />
      <LocationField settings={settings} />
      <UnitsField settings={settings} />
      <EmailCopy settings={settings} email={user.email} />
      <SendNow time={values.daily_message_time} />
      {/* Saved values show in the controls themselves; this tells screen readers. */}
      <p className="visually-hidden" role="status" aria-live="polite">
        {status}
      </p>
    </div>
  );
}

type Settings = ReturnType<typeof useDailySettings>;

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} className="field-error" role="alert">
      {message}
    </p>
  );
}

function DeliveryTime({ settings }: { settings: Settings }) {
  const { values, errors, save } = settings;
  const saved = values.daily_message_time;
  /** What is being typed; null shows the saved value (put back by itself when a save fails). */
  const [draft, setDraft] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();

  useEffect(() => () => clearTimeout(timer.current), []);

  const commit = (value: string) => {
    clearTimeout(timer.current);
    // Browsers may add seconds (07:00:00); the server takes HH:MM.
    const time = value.slice(0, 5);
    setDraft(null);
    if (time === saved || !ZDailyTime.safeParse(time).success) return;
    void save(
      'daily_message_time',
      { daily_message_time: time },
      { shown: time, done: () => `Delivery time set to ${time}.` },
    );
  };

  return (
    <div className="daily-row">
      <div className="daily-row-text">
        <label className="daily-row-title" htmlFor={inputId}>
          Delivery time
        </label>
        <p id={hintId} className="muted daily-row-hint">
          Delivered around {saved} {values.time_zone ? 'your time' : 'UTC, until you choose a time zone'}.
        </p>
      </div>
      <div className="daily-row-control">
        <input
          id={inputId}
          type="time"
          className="input daily-time"
          value={draft ?? saved}
          required
          aria-describedby={describedBy(hintId, errors.daily_message_time && errorId)}
          onChange={(event) => {
            const value = event.target.value;
            setDraft(value);
            clearTimeout(timer.current);
            timer.current = setTimeout(() => commit(value), TIME_SAVE_DELAY_MS);
          }}
          onBlur={(event) => commit(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') commit(event.currentTarget.value);
          }}
        />
      </div>
      <FieldError id={errorId} message={errors.daily_message_time} />
    </div>
  );
}

function TimeZoneField({ settings }: { settings: Settings }) {
  const { values, errors, busy, save, setError } = settings;
  const saved = values.time_zone;
  /** What is being typed; null shows the saved zone. */
  const [draft, setDraft] = useState<string | null>(null);
  const zones = useMemo(timeZoneNames, []);
  const device = useMemo(browserTimeZone, []);
  const input = useRef<HTMLInputElement>(null);
  const inputId = useId();
  const listId = useId();
  const hintId = useId();
  const errorId = useId();

  const choose = (zone: string) =>
    save('time_zone', { time_zone: zone }, { shown: zone, done: (me) => `Time zone set to ${me.time_zone ?? zone}.` });

  const commit = (value: string) => {
    const zone = canonicalTimeZone(value);
    // A time zone can be changed, not removed: an emptied field shows the saved one again.
    if (!zone && value.trim()) {
      setError('time_zone', TIME_ZONE_UNKNOWN);
      return;
    }
    setDraft(null);
    if (!zone || zone === saved) setError('time_zone', undefined);
    else void choose(zone);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      commit(event.currentTarget.value);
    } else if (event.key === 'Escape' && draft !== null) {
      event.preventDefault();
      setDraft(null);
      setError('time_zone', undefined);
    }
  };

  return (
    <div className="daily-row">
      <div className="daily-row-text">
        <label className="daily-row-title" htmlFor={inputId}>
          Time zone
        </label>
        <p id={hintId} className="muted daily-row-hint">
          {saved
            ? 'Your delivery time and your calendar are read in this zone.'
            : 'Not set yet: UTC is used meanwhile.'}
        </p>
      </div>
      <div className="daily-row-control daily-zone">
        <input
          ref={input}
          id={inputId}
          className="input"
          list={listId}
          value={draft ?? saved ?? ''}
          placeholder="Search, e.g. Europe/Berlin"
          autoComplete="off"
          spellCheck={false}
          aria-invalid={errors.time_zone ? true : undefined}
          aria-describedby={describedBy(hintId, errors.time_zone && errorId)}
          onChange={(event) => {
            const value = event.target.value;
            setDraft(value);
            // A pick from the list is saved at once; typed text waits for Enter or leaving the field.
            const native = event.nativeEvent as InputEvent;
            if (native.inputType === 'insertReplacementText' || native.inputType === undefined) {
              const zone = canonicalTimeZone(value);
              if (zone && zone !== saved && zones.includes(zone)) commit(zone);
            }
          }}
          onBlur={(event) => commit(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <datalist id={listId}>
          {zones.map((zone) => (
            <option key={zone} value={zone} />
          ))}
        </datalist>
        {/* Kept while saving, so focus is not lost if the save fails and it must be pressed again. */}
        {device && (device !== saved || busy.time_zone) && (
          <button
            type="button"
            className="btn btn-ghost btn-sm daily-device-zone"
            aria-disabled={busy.time_zone || undefined}
            onClick={() => {
              if (busy.time_zone) return;
              setDraft(null);
              setError('time_zone', undefined);
              // The button goes once the zone is saved: focus moves to the field that now shows it.
              void choose(device).then((me) => me && input.current?.focus());
            }}
          >
            Use this device's time zone ({device})
          </button>
        )}
      </div>
      <FieldError id={errorId} message={errors.time_zone} />
    </div>
  );
}

function LocationField({ settings }: { settings: Settings }) {
  const { values, errors, busy, save } = settings;
  const saved = values.location;
  const [draft, setDraft] = useState(saved?.name ?? '');
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const saving = busy.location === true;
  const place = draft.trim();
  const canSave = !saving && place !== '' && place !== saved?.name;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!canSave) return;
    const me = await save(
      'location',
      { location: place },
      { done: (me) => (me.location ? `Weather location set to ${me.location.name}.` : 'Weather location cleared.') },
    );
    // The field takes the server's name for the place ("Lisbon, Portugal"); a failed one stays to be corrected.
    if (me) setDraft((current) => (current.trim() === place ? (me.location?.name ?? '') : current));
  };

  const clear = async () => {
    if (saving) return;
    if (await save('location', { location: null }, { done: () => 'Weather location cleared.' })) setDraft('');
  };

  return (
    <form className="daily-row" onSubmit={submit} aria-busy={saving || undefined}>
      <div className="daily-row-text">
        <label className="daily-row-title" htmlFor={inputId}>
          Location for the weather
        </label>
        <p id={hintId} className="muted daily-row-hint">
          {saved ? (
            <>
              Weather for <strong className="daily-place">{saved.name}</strong>
            </>
          ) : (
            'No location yet: your message leaves the weather out.'
          )}
        </p>
      </div>
      <div className="daily-row-control daily-location">
        <input
          id={inputId}
          className="input"
          value={draft}
          maxLength={LOCATION_NAME_MAX}
          placeholder={saved ? 'Change the city' : 'A city, e.g. Lisbon'}
          autoComplete="address-level2"
          aria-invalid={errors.location ? true : undefined}
          aria-describedby={describedBy(hintId, errors.location && errorId)}
          onChange={(event) => setDraft(event.target.value)}
        />
        <div className="daily-buttons">
          <button type="submit" className="btn btn-secondary btn-sm" aria-disabled={!canSave || undefined}>
            {saving ? 'Saving...' : 'Save'}
          </button>
          {saved && (
            <button
              type="button"
              className="btn btn-ghost btn-sm"
              aria-disabled={saving || undefined}
              onClick={() => void clear()}
            >
              Clear
            </button>
          )}
        </div>
      </div>
      <FieldError id={errorId} message={errors.location} />
    </form>
  );
}

function UnitsField({ settings }: { settings: Settings }) {
  const { values, errors, save } = settings;
  const name = useId();
  const legendId = useId();
  const hintId = useId();
  const errorId = useId();
  return (
    <div
      className="daily-row daily-units"
      role="radiogroup"
      aria-labelledby={legendId}
      aria-describedby={describedBy(hintId, errors.temperature_unit && errorId)}
    >
      <div className="daily-row-text">
        <p id={legendId} className="daily-row-title">
          Temperature units
        </p>
        <p id={hintId} className="muted daily-row-hint">
          Auto uses °F for places in the United States and °C elsewhere.
        </p>
      </div>
      <div className="daily-row-control">
        <div className="segmented">
          {UNITS.map((unit) => (
            <label key={unit.value} className="segmented-option">
              <input
                type="radio"
                name={name}
                value={unit.value}
                checked={values.temperature_unit === unit.value}
                onChange={() =>
                  void save(
                    'temperature_unit',
                    { temperature_unit: unit.value },
                    { shown: unit.value, done: () => `Temperature units set to ${unit.label}.` },
                  )
                }
              />
              <span>{unit.label}</span>
            </label>
          ))}
        </div>
      </div>
      <FieldError id={errorId} message={errors.temperature_unit} />
    </div>
  );
}

function EmailCopy({ settings, email }: { settings: Settings; email: string }) {
  const { values, errors, save } = settings;
  const hintId = useId();
  const errorId = useId();
  const on = values.daily_message_email;
  return (
    <div className="daily-row daily-row-switch">
      <SettingSwitch
        label="Also email it to me"
        checked={on}
        describedBy={describedBy(hintId, errors.daily_message_email && errorId)}
        onToggle={() =>
          void save(
            'daily_message_email',
            { daily_message_email: !on },
            { shown: !on, done: (me) => (me.daily_message_email ? 'Email copy turned on.' : 'Email copy turned off.') },
          )
        }
      />
      <p id={hintId} className="muted daily-row-hint">
        A copy of each daily message goes to {email}. It always appears in your chat.
      </p>
      <FieldError id={errorId} message={errors.daily_message_email} />
    </div>
  );
}

type SendState =
  | { kind: 'idle' }
  | { kind: 'sending' }
  | { kind: 'queued' }
  | { kind: 'delivered'; id: number }
  | { kind: 'failed'; message: string };

function SendNow({ time }: { time: string }) {
  const [state, setState] = useState<SendState>({ kind: 'idle' });
  const hintId = useId();
  const sending = state.kind === 'sending';

  const send = async () => {
    if (sending) return;
    setState({ kind: 'sending' });
    try {
      const answer = await sendDailyMessageNow();
      setState(answer.status === 'delivered' ? { kind: 'delivered', id: answer.id } : { kind: 'queued' });
    } catch (err) {
      setState({ kind: 'failed', message: sendFailureText(err) });
    }
  };

  return (
    <div className="daily-row daily-send-now">
      <div className="daily-row-text">
        <p className="daily-row-title">Don't want to wait?</p>
        <p id={hintId} className="muted daily-row-hint">
          Get today's message now instead of around {time}, up to {DAILY_SEND_NOW_PER_DAY} times a day.
        </p>
      </div>
      <div className="daily-row-control">
        <button
          type="button"
          className="btn btn-secondary btn-sm"
          aria-describedby={hintId}
          aria-disabled={sending || undefined}
          onClick={() => void send()}
        >
          {sending ? 'Sending...' : "Send today's message now"}
        </button>
      </div>
      <div className="daily-send-status" role="status" aria-live="polite">
        {state.kind === 'queued' && <p className="daily-send-note">{SEND_NOW_QUEUED}</p>}
        {state.kind === 'delivered' && (
          <p className="daily-send-note">
            {SEND_NOW_DELIVERED} <Link to={`/chat?dmid=${state.id}`}>Open it in your chat</Link>
          </p>
        )}
        {state.kind === 'failed' && <p className="field-error">{state.message}</p>}
      </div>
    </div>
  );
}

function sendFailureText(err: unknown): string {
  if (err instanceof ApiError && err.status === 429) return DAILY_MESSAGES.sendNowLimit;
  // A refusal the server explains (e.g. paused) is worth showing; a crash or a lost connection is not.
  if (err instanceof ApiError && err.status >= 400 && err.status < 500) return serverMessage(err) ?? SEND_NOW_FAILED;
  return SEND_NOW_FAILED;
}
