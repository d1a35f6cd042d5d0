import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

/** Channels, directions and statuses of communication_messages (issue 9 item 4). */
export const CHANNELS = ['email', 'whatsapp', 'messenger'] as const;
export const DIRECTIONS = ['in', 'out'] as const;
export const STATUSES = ['received', 'queued', 'pending', 'sent', 'delivered', 'read', 'failed'] as const;

const DAY = { type: 'string', format: 'date', description: "A day (YYYY-MM-DD) in the tenant's time zone; inclusive." };

/** GET /api/communications query. */
export const communicationListQuery: Schema = pageQuery(20, {
  channel: { type: 'string', enum: [...CHANNELS] },
  direction: { type: 'string', enum: [...DIRECTIONS] },
  status: { type: 'string', enum: [...STATUSES] },
  customer_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
  account_ref: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  search: {
    type: 'string',
    maxLength: 100,
    ...singleLine,
    description: 'Case-insensitive substring of subject, addresses or body text.',
  },
  date_from: DAY,
  date_to: DAY,
});

/** Path of an attachment download. */
export const attachmentParams: Schema = {
  type: 'object',
  required: ['id', 'attachment_id'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer', minimum: 1, maximum: 2147483647 },
    attachment_id: { type: 'integer', minimum: 1, maximum: 2147483647 },
  },
};

const str = { type: ['string', 'null'] };
const time = { type: ['string', 'null'], format: 'date-time' };

/** One item of the list (no bodies). */
export const communicationSummary: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    channel: { type: 'string', enum: [...CHANNELS] },
    direction: { type: 'string', enum: [...DIRECTIONS] },
    status: { type: 'string', enum: [...STATUSES] },
    source: { type: 'string' },
    account_ref: str,
    customer_id: { type: ['integer', 'null'] },
    counterpart: str,
    is_group: { type: 'boolean' },
    from_address: str,
    from_name: str,
    to_addresses: str,
    subject: str,
    snippet: str,
    has_attachments: { type: 'boolean' },
    reply_to_id: { type: ['integer', 'null'] },
    resent_from_id: { type: ['integer', 'null'], description: 'Chat: the failed message this one resends.' },
    error_code: str,
    available_at: {
      ...time,
      description: 'Chat, still queued: when its send may happen (the account limits); null when it may go now.',
    },
    occurred_at: { type: 'string', format: 'date-time' },
    sent_at: time,
    deleted_at: time,
  },
};

/** The detail: bodies, headers, attachments, replies. */
export const communicationDetail: Schema = {
  type: 'object',
  properties: {
    ...(communicationSummary.properties as Record<string, Schema>),
    cc_addresses: str,
    reply_to_address: str,
    body_text: str,
    body_html: { type: ['string', 'null'], description: 'Sanitised HTML; cid: images point at the attachment URLs.' },
    message_id: str,
    in_reply_to: str,
    references: str,
    error_message: str,
    received_at: time,
    queued_at: time,
    send_started_at: time,
    delivered_at: time,
    read_at: time,
    failed_at: time,
    attachments: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          filename: str,
          content_type: { type: 'string' },
          size_bytes: { type: 'integer' },
          content_id: str,
          available: { type: 'boolean', description: 'False: over 25 MB (metadata only) or deleted.' },
          url: str,
        },
      },
    },
    replies: { type: 'array', items: communicationSummary },
  },
};

export const communicationList: Schema = listEnvelope(communicationSummary);
export const communicationOne: Schema = { type: 'object', properties: { data: communicationDetail } };

/** POST /api/communications/{id}/reply-email body (issue 9 item 5): all three required. */
export const replyEmailBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['to', 'subject', 'message'],
  properties: {
    to: { type: 'string', format: 'email', maxLength: 254, ...singleLine, description: 'One recipient address.' },
    subject: { type: 'string', minLength: 1, maxLength: 255, ...singleLine },
    message: { type: 'string', minLength: 1, maxLength: 100_000, description: 'Plain text body (UTF-8).' },
  },
};

/** 502 of reply-email: the mail server refused it (or its delivery is unknown); `data` is the failed message. */
export const replyEmailFailed: Schema = {
  type: 'object',
  required: ['code', 'message', 'data'],
  properties: {
    code: { type: 'string', enum: ['mail_server_error'] },
    message: { type: 'string', description: "The server's reply, or why the delivery is unknown." },
    data: communicationDetail,
  },
};
