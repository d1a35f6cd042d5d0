/**
 * Mocha reporter used by bin/test.ts for each shard: mocha's own `spec` output, plus, when
 * TEST_TIMINGS_OUT names a file, the wall time of every test file (its top-level suites, hooks
 * included) written there as JSON `{ "test/x.test.ts": seconds }` at the end of the run.
 * bin/test.ts reads these to balance the shards and to print the slowest files.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Mocha.Runner.constants;

class TimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const out = process.env.TEST_TIMINGS_OUT;
    if (!out) return;
    const started = new Map();
    const seconds = {};
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent && suite.parent.root && suite.file) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const t0 = started.get(suite);
      if (t0 === undefined) return;
      const file = path.relative(process.cwd(), suite.file).split(path.sep).join('/');
      seconds[file] = Math.round(((seconds[file] ?? 0) + (Date.now() - t0) / 1000) * 10) / 10;
    });
    runner.once(EVENT_RUN_END, () => {
      fs.writeFileSync(out, JSON.stringify(seconds));
    });
  }
}

module.exports = TimingReporter;
