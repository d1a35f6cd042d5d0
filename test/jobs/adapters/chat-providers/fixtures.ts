import type {
  ChatAccount,
  PermanentCode,
  ProviderName,
  Recipient,
} from '../../../../jobs/adapters/chat-providers/index.js';

/** Sentinel secrets: no outcome, classification or message may contain them. */
export const TOKEN = 'SENTINEL-token-7c41f0a9d2';
export const SECRET = 'SENTINEL-secret-55e0b3';

export const PHONE: Recipient = { kind: 'phone', value: '0812-3456 7890' };
export const PHONE_DIGITS = '6281234567890';
export const PSID: Recipient = { kind: 'conversation', value: '24012345678901234' };

/** How each provider is reached for a send, with one documented success and one refusal in a 200. */
export interface ProviderFixture {
  account: ChatAccount;
  recipient: Recipient;
  origin: string;
  sendPath: string;
  okBody: unknown;
  okStatus?: number;
  /** a refusal the provider documents inside a 2xx, and the code it must map to */
  refusal?: { body: unknown; code: PermanentCode };
  /** a refusal that echoes the token, to check redaction */
  echo: (token: string) => unknown;
  /** status of the echoing refusal (default 200) */
  echoStatus?: number;
}

export const FIXTURES: Record<ProviderName, ProviderFixture> = {
  wablas: {
    account: { provider: 'wablas', token: TOKEN, secret_key: SECRET, base_url: 'https://bdg.wablas.example' },
    recipient: PHONE,
    origin: 'https://bdg.wablas.example',
    sendPath: '/api/send-message',
    okBody: {
      status: true,
      message: 'Message is pending and waiting to be processed',
      data: { messages: [{ id: '5be46e84-650c', phone: PHONE_DIGITS, message: 'hi', status: 'pending' }] },
    },
    refusal: { body: { status: false, message: 'token invalid' }, code: 'auth_failed' },
    echo: (t) => ({ status: false, message: `token ${t} invalid` }),
  },
  fonnte: {
    account: { provider: 'fonnte', token: TOKEN },
    recipient: PHONE,
    origin: 'https://api.fonnte.com',
    sendPath: '/send',
    okBody: {
      detail: 'success! message in queue',
      id: ['80367170'],
      process: 'pending',
      status: true,
      target: [PHONE_DIGITS],
    },
    refusal: { body: { reason: 'target invalid', status: false }, code: 'invalid_recipient' },
    echo: (t) => ({ reason: `token invalid: ${t}`, status: false }),
  },
  ruangwa: {
    account: { provider: 'ruangwa', token: TOKEN },
    recipient: PHONE,
    origin: 'https://app.ruangwa.id',
    sendPath: '/api/send_message',
    okBody: { result: 'true', message: 'Pesan berhasil dikirim', id: '918273' },
    refusal: { body: { result: 'false', message: 'api_key tidak valid' }, code: 'auth_failed' },
    echo: (t) => ({ result: 'false', message: `api_key ${t} tidak valid` }),
  },
  waha: {
    account: { provider: 'waha', token: TOKEN, secret_key: 'ispdemo', base_url: 'https://waha.example' },
    recipient: PHONE,
    origin: 'https://waha.example',
    sendPath: '/api/sendText',
    okStatus: 201,
    okBody: { id: 'true_6281234567890@c.us_3EB0C767D26A1D6A1F', timestamp: 1700000000, body: 'hi', fromMe: true },
    echo: (t) => ({ statusCode: 401, message: `Invalid API key ${t}` }),
    echoStatus: 401,
  },
  messenger: {
    account: { provider: 'messenger', token: TOKEN, secret_key: '1029384756' },
    recipient: PSID,
    origin: 'https://graph.facebook.com',
    sendPath: '/v21.0/1029384756/messages',
    okBody: {
      recipient_id: '24012345678901234',
      message_id: 'm_AG5Hz2Uq7tuwNEhXfYYKj8mJEM_QPpz5jdCK48PnKAjSdjfipqxqMvK8ma6AC8fplwlqLP_5cgXIbu7I3rBN0P',
    },
    echo: (t) => ({ error: { message: `Invalid OAuth access token ${t}`, type: 'OAuthException', code: 190 } }),
  },
  watzap: {
    account: { provider: 'watzap', token: TOKEN, secret_key: SECRET },
    recipient: PHONE,
    origin: 'https://api.watzap.id',
    sendPath: '/v1/send_message',
    okBody: { status: '200', message: 'Successfully', ack: 'successfully' },
    refusal: { body: { status: '1002', message: 'Invalid API Key' }, code: 'auth_failed' },
    echo: (t) => ({ status: '1003', message: `Invalid Number Key ${t}` }),
  },
  starsender: {
    account: { provider: 'starsender', token: TOKEN },
    recipient: PHONE,
    origin: 'https://api.starsender.online',
    sendPath: '/api/send',
    okBody: { success: true, message: 'Success sent message', data: { id: 'ss-77812' } },
    refusal: { body: { success: false, message: 'Number not registered on WhatsApp' }, code: 'invalid_recipient' },
    echo: (t) => ({ success: false, message: `Invalid device key ${t}` }),
  },
};
