/**
 * Minimal types for mailparser 3.9.31 (the package ships none; only what parse.ts uses, from
 * node_modules/mailparser/lib/simple-parser.js and mail-parser.js).
 */
declare module 'mailparser' {
  import type { Transform } from 'node:stream';
  export interface EmailAddress {
    address?: string;
    name: string;
    group?: EmailAddress[];
  }
  export interface AddressObject {
    value: EmailAddress[];
    html: string;
    text: string;
  }
  export interface Attachment {
    filename?: string;
    contentType: string;
    contentDisposition?: string;
    size: number;
    contentId?: string;
    cid?: string;
    related?: boolean;
    content: Buffer;
    checksum?: string;
  }
  export interface ParsedMail {
    headers: Map<string, unknown>;
    subject?: string;
    from?: AddressObject;
    to?: AddressObject | AddressObject[];
    cc?: AddressObject | AddressObject[];
    bcc?: AddressObject | AddressObject[];
    replyTo?: AddressObject;
    date?: Date;
    messageId?: string;
    inReplyTo?: string;
    references?: string | string[];
    text?: string;
    html: string | false;
    textAsHtml?: string;
    attachments: Attachment[];
  }
  export interface SimpleParserOptions {
    keepCidLinks?: boolean;
    skipHtmlToText?: boolean;
    skipTextToHtml?: boolean;
    skipImageLinks?: boolean;
    skipTextLinks?: boolean;
    maxHtmlLengthToParse?: number;
  }
  export function simpleParser(
    input: Buffer | string | NodeJS.ReadableStream,
    options?: SimpleParserOptions,
  ): Promise<ParsedMail>;
  /** One attachment of the streaming parser: read `content` to the end, then call `release()`. */
  export interface StreamAttachment {
    type: 'attachment';
    content: NodeJS.ReadableStream & AsyncIterable<Buffer>;
    contentType: string;
    contentDisposition?: string;
    filename?: string;
    contentId?: string;
    cid?: string;
    related?: boolean;
    size?: number;
    release(): void;
  }
  /** The text parts, emitted once at the end. */
  export interface StreamText {
    type: 'text';
    text?: string;
    html?: string;
    textAsHtml?: string;
  }
  /** mailparser's streaming parser (issue 9 sync): a Transform whose readable side is objectMode. */
  export class MailParser extends Transform {
    constructor(options?: SimpleParserOptions & { maxHtmlLengthToParse?: number });
    subject?: string;
    from?: AddressObject;
    to?: AddressObject | AddressObject[];
    cc?: AddressObject | AddressObject[];
    replyTo?: AddressObject;
    date?: Date;
    messageId?: string;
    inReplyTo?: string;
    references?: string | string[];
    headers: Map<string, unknown>;
    on(event: 'headers', listener: (headers: Map<string, unknown>) => void): this;
    on(event: 'data', listener: (data: StreamAttachment | StreamText) => void): this;
    on(event: 'end' | 'close', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }
}
