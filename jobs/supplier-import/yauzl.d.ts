/** The part of yauzl 3 the supplier import uses (no @types package installed). */
declare module 'yauzl' {
  import type { EventEmitter } from 'node:events';
  export interface Entry {
    fileName: string;
    compressedSize: number;
    uncompressedSize: number;
  }
  export interface ZipFile extends EventEmitter {
    entryCount: number;
    readEntry(): void;
    close(): void;
  }
  export function open(
    path: string,
    options: { lazyEntries: boolean; autoClose?: boolean },
    callback: (err: Error | null, zip: ZipFile) => void,
  ): void;
}
