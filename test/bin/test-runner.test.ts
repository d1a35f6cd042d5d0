import { expect } from 'chai';
import { failureSummary, summaryCounts } from '../../bin/test.js';

describe('bin/test.ts failureSummary (failures repeated at the end of a run)', () => {
  const passed = '  a suite\n    \u001b[32m✔\u001b[39m works\n\n  1 passing (3ms)\n';
  const failedBlock =
    '  1 passing (5ms)\n  1 failing\n\n  1) a suite\n       breaks:\n     AssertionError: expected 1 to equal 2\n      at x (test/a.test.ts:3:9)\n';

  it('is empty for a shard that passed', () => {
    expect(failureSummary(passed, false)).to.equal('');
  });

  it('repeats the failing block of each mocha process, colour codes removed', () => {
    const output = `${failedBlock}\n----- cut-over mode (TEST_TENANT_DB=1): 1 files -----\n${failedBlock.replace('breaks', 'breaks again')}`;
    const summary = failureSummary(output, true);
    expect(summary.match(/1 failing/g)).to.have.length(2);
    expect(summary).to.include('breaks:').and.include('breaks again:').and.include('expected 1 to equal 2');
    expect(summary).not.to.include('1 passing');
  });

  it('gives the last lines when a failed shard has no failure report', () => {
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i}`).join('\n');
    const summary = failureSummary(`${passed}${lines}\n`, true);
    expect(summary).to.match(/^\(no mocha failure report/);
    expect(summary).to.include('line 59').and.include('line 20');
    expect(summary).not.to.include('line 19\n');
  });

  it('cuts a long report at the given length and says how much is left', () => {
    const long = `  1 failing\n\n  1) x\n${'y'.repeat(500)}\n`;
    const summary = failureSummary(long, true, 100);
    expect(summary).to.have.length.below(200);
    expect(summary).to.match(/\.\.\. \(\d+ more characters in the shard output above\)$/);
  });
});

describe('bin/test.ts summaryCounts (the run line)', () => {
  const cases: { what: string; lines: string[]; counts: { passing: number; failing: number } }[] = [
    {
      what: "sums mocha's own summary lines of each process, colour codes removed",
      lines: [
        '\u001b[92m \u001b[0m\u001b[32m 108 passing\u001b[0m\u001b[90m (54s)\u001b[0m',
        '\u001b[31m  2 failing\u001b[0m',
        '----- cut-over mode (TEST_TENANT_DB=1): 3 files -----',
        '  7 passing (1m)',
      ],
      counts: { passing: 115, failing: 2 },
    },
    {
      what: 'does not count a test title or log line that merely contains "N passing"',
      lines: [
        '    ✔ reports "3 passing" in its summary (12ms)',
        '  log: 5 passing (2s) of 6',
        '  4 failing checks were expected',
        '  10 passing (3s)',
      ],
      counts: { passing: 10, failing: 0 },
    },
  ];
  for (const c of cases) {
    it(c.what, () => {
      expect(summaryCounts(`${c.lines.join('\n')}\n`)).to.deep.equal(c.counts);
    });
  }
});
