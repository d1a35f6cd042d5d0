/**
 * Preloaded first (`--import`) in every sandboxed child BullMQ forks (workers/main.ts
 * `sandboxedForkOptions`): SIGINT and SIGTERM that arrive while the child boots are ignored.
 *
 * Why: a Ctrl-C of `npm start` (or a stop of the whole process group or cgroup) reaches the child
 * too. Until BullMQ's child main installs its own handlers (finish the current job, then exit),
 * Node's default action would end it, and a child that dies before it reports "init completed" is
 * never noticed by BullMQ 6.7's Child.initChild (its 'close' listener is removed on 'exit'): the job
 * then stays active until the worker's grace period ends. Ignored, the signal leaves the child to
 * boot and run its job; the closing worker then stops it (SIGTERM, SIGKILL after BullMQ's timeout).
 * Once BullMQ's handlers are installed these listeners are no-ops beside them.
 */
const ignore = () => {};
process.on('SIGINT', ignore);
process.on('SIGTERM', ignore);
