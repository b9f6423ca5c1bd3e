import { describe, expect, it } from 'vitest';
import { checkAllauthResponses } from './allauth-openapi.ts';

const login = (status: number, body: unknown) => ({
  method: 'POST',
  url: '/_allauth/browser/v1/auth/login',
  status,
  body: JSON.stringify(body),
});

describe('checkAllauthResponses', () => {
  it('accepts responses shaped as allauth documents them', () => {
    expect(
      checkAllauthResponses([
        login(200, {
          status: 200,
          data: {
            user: { id: 1, display: 'a@b.co', email: 'a@b.co', has_usable_password: true },
            methods: [{ method: 'password', at: 1, email: 'a@b.co' }],
          },
          meta: { is_authenticated: true },
        }),
        login(400, { status: 400, errors: [{ message: 'x', code: 'required', param: 'email' }] }),
      ]),
    ).toEqual([]);
  });

  it('reports a body that breaks the schema, a status mismatch, and an undocumented status', () => {
    const problems = checkAllauthResponses([
      login(200, { status: 200, data: { methods: [] }, meta: { is_authenticated: true } }),
      login(400, { status: 401, errors: [] }),
      login(418, { status: 418 }),
    ]);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/POST \/_allauth\/browser\/v1\/auth\/login → 200: .*user/),
        expect.stringMatching(/→ 400: body status 401 differs from the HTTP status/),
        expect.stringMatching(/418: status not in allauth's OpenAPI document/),
      ]),
    );
  });
});
