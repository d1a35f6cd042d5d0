/**
 * Minimal types for mailparser 3.9.31 (the package ships none; only what parse.ts uses, from
 * node_modules/mailparser/lib/simple-parser.js and mail-parser.js).
 */
declare module 'mailparser' {
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
}
