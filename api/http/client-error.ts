import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../lib/logger.js';

/**
 * Node's own rejections of a request (issue 7 item 5): the HTTP parser refuses a request before Koa
 * sees it (request line and headers over 16 KB, a duplicated Content-Length, Transfer-Encoding
 * together with Content-Length, garbage), or the request timeout fires. Without a `clientError`
 * listener Node answers with an empty body; with clientErrorHandler() the service answers JSON in
 * its own error format, with a request id, and closes the connection (handleClientErrors).
 */

/** A client error as the service's writer renders it. */
export interface ClientErrorInfo {
  /** 400, 408, 413 or 431. */
  status: number;
  /** DESIGN §4-style code: BAD_REQUEST, REQUEST_TIMEOUT, PAYLOAD_TOO_LARGE, HEADERS_TOO_LARGE. */
  code: string;
  message: string;
  requestId: string;
}

/** Node's parser / server error codes -> what the client is told (anything else is 400 BAD_REQUEST). */
const BY_NODE_CODE: Record<string, Omit<ClientErrorInfo, 'requestId'>> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    code: 'HEADERS_TOO_LARGE',
    message: 'The request line and headers are larger than 16 KB.',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    message: 'The chunk extensions of the request body are too large.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'The request was not received completely in time.',
  },
};

const BAD_REQUEST: Omit<ClientErrorInfo, 'requestId'> = {
  status: 400,
  code: 'BAD_REQUEST',
  message:
    'The request is not valid HTTP/1.1 (for example a duplicated Content-Length, ' +
    'or Transfer-Encoding with Content-Length).',
};

/**
 * What the client is told for a Node client error.
 * @param err the error of the server's 'clientError' event (its `code` decides)
 * @returns status, code and message (400 BAD_REQUEST unless the code is a known one)
 */
export function describeClientError(err: { code?: unknown }): Omit<ClientErrorInfo, 'requestId'> {
  return (typeof err.code === 'string' && BY_NODE_CODE[err.code]) || BAD_REQUEST;
}

/**
 * Attaches the service's answer to Node's client errors to an http.Server: a 'clientError' listener
 * that writes a complete HTTP/1.1 response with the JSON body `render` returns (Content-Type
 * application/json, X-Request-Id, nosniff, no-store, Connection: close) and ends the connection.
 * It answers when no response is in progress on the connection (also on a kept-alive one whose
 * earlier responses are done; never in the middle of another response, which would corrupt it); a
 * reset connection, or one with a response in progress, is just destroyed. Call it where the
 * service's server is created (api/server.ts, api/mail/server.ts, the tests' helpers).
 * @param server the service's server
 * @param render the service's error body for the info (web `{message, code, request_id}`, mail
 *   `{ok: false, error, message, request_id}`)
 * @param logger optional: one info line per answered client error (request id, status, Node's code)
 */
export function handleClientErrors(
  server: Server,
  render: (info: ClientErrorInfo) => Record<string, unknown>,
  logger?: Logger,
): void {
  // responses in progress per connection (only public events: 'request' and the response's 'close')
  const busy = new WeakMap<object, number>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once('close', () => busy.set(socket, (busy.get(socket) ?? 1) - 1));
  });
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable || (busy.get(socket) ?? 0) > 0) {
      socket.destroy();
      return;
    }
    const info: ClientErrorInfo = { ...describeClientError(err), requestId: randomUUID() };
    const body = JSON.stringify(render(info));
    const head = [
      `HTTP/1.1 ${info.status} ${STATUS_CODES[info.status] ?? 'Error'}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${info.requestId}`,
      'X-Content-Type-Options: nosniff',
      'Cache-Control: no-store',
      'Connection: close',
    ];
    logger?.info({ request_id: info.requestId, status: info.status, node_code: err.code ?? null }, 'client error');
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
