import { bodyObject, falsy, pick, permanent, refusal, truthy } from './classify.js';
import { defineProvider, present } from './define.js';

/**
 * Fonnte (<provider_2>). Source: Fonnte docs, https://docs.fonnte.com/api-send-message/ ("API Send
 * Message") and https://docs.fonnte.com/ ("API get device profile", POST /device).
 * - Base URL: fixed https://api.fonnte.com (a configured base URL is refused).
 * - Auth: `Authorization: <token>` (the device token).
 * - Send: POST /send, form fields target, message, countryCode='0' (the number is already
 *   normalised; Fonnte documents 0 as "disable replacement"). A group id goes in target as is.
 * - Answer: `{status: true, detail: 'success! message in queue', id: ['80367170'], process:
 *   'pending', target: [...]}`; a refusal `{status: false, reason: 'token invalid' | 'target
 *   invalid' | ...}` with HTTP 200. Queued: state 'pending' with the first id.
 * - Check: POST /device answers `{status: true, device_status: 'connect'|'disconnect', ...}` or
 *   `{status: false, reason: 'token invalid'}`.
 */
export const fonnte = defineProvider({
  name: 'fonnte',
  baseUrlRule: 'fixed',
  defaultBaseUrl: 'https://api.fonnte.com',
  recipientKinds: ['phone', 'group'],
  checkAccount: (a) => (present(a.token) ? null : 'fonnte needs the device token.'),
  sendRequest: ({ account, root }, address, _kind, message) => ({
    method: 'POST',
    url: new URL(`${root}/send`),
    headers: { authorization: account.token! },
    form: new URLSearchParams({ target: address, message, countryCode: '0' }),
  }),
  checkRequest: ({ account, root }) => ({
    method: 'POST',
    url: new URL(`${root}/device`),
    headers: { authorization: account.token! },
    form: new URLSearchParams(),
  }),
  read(res) {
    const body = bodyObject(res);
    if (!body || !('status' in body)) return null;
    if (falsy(body.status)) return refusal(res, pick(body, ['reason'], ['detail'], ['message']) ?? '');
    if (!truthy(body.status) || res.status < 200 || res.status >= 300) return null;
    if (res.call === 'check') {
      const device = pick(body, ['device_status']);
      if (device && /disconnect/i.test(device))
        return permanent('device_disconnected', 'fonnte: the device is disconnected');
      return { kind: 'sent', messageId: null, state: 'sent', detail: `fonnte: device ${device ?? 'answered'}` };
    }
    const id = pick(body, ['id', 0], ['id']);
    const process = pick(body, ['process']);
    return {
      kind: 'sent',
      messageId: id,
      state: id && (!process || /pending|process|queue|wait/i.test(process)) ? 'pending' : 'sent',
      detail: `fonnte: ${pick(body, ['detail']) ?? 'accepted'}`,
    };
  },
});
