/**
 * A sandboxed processor for test/jobs/workers.test.ts whose module ends its process as it loads
 * (like a child that runs out of memory while loading its libraries): the child dies after BullMQ
 * sent it this file and before it reported "init completed".
 */
process.exit(3);

export default function unreachable(): Promise<string> {
  return Promise.resolve('never called');
}
