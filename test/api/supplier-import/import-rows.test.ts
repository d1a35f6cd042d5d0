import { expect } from 'chai';
import { ValidationFailed } from '../../../api/errors.js';
import { importRows } from '../../../api/supplier-import/service.js';
import { FIELD_MAX, MAX_PRICE } from '../../../jobs/supplier-import/rows.js';

describe('supplier import: the import body to rows (issue 16 item 6, importRows)', () => {
  it('turns selected items into trimmed rows (blank -> null, prices as text, row = index + 1)', () => {
    const rows = importRows([
      {
        name: '  ONT ZTE  ',
        sku: ' Z-1 ',
        category: '',
        unit: null,
        cost_price: 250000.5,
        sell_price: null,
        notes: 'a\nb',
      },
      { name: 'skipped', selected: false },
      { name: 'Drop cable', cost_price: 0 },
    ]);
    expect(rows).to.deep.equal([
      {
        row: 1,
        name: 'ONT ZTE',
        sku: 'Z-1',
        category: null,
        unit: null,
        cost_price: '250000.5',
        sell_price: null,
        notes: 'a\nb',
        valid: true,
        errors: {},
      },
      {
        row: 3,
        name: 'Drop cable',
        sku: null,
        category: null,
        unit: null,
        cost_price: '0',
        sell_price: null,
        notes: null,
        valid: true,
        errors: {},
      },
    ]);
  });

  it('names every invalid field of every selected item, by its index in the body', () => {
    let err: unknown;
    try {
      importRows([
        { name: '   ' },
        { name: 'ok', selected: false, sku: 's'.repeat(FIELD_MAX.sku + 1) },
        { name: 'a\tb', unit: 'u'.repeat(FIELD_MAX.unit + 1), notes: 'n'.repeat(FIELD_MAX.notes + 1) },
        { name: 'p', cost_price: -0.01, sell_price: MAX_PRICE + 1 },
        { name: 'q', category: 'x\u0007', cost_price: 1.005 },
      ]);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ValidationFailed);
    expect((err as ValidationFailed).errors).to.deep.equal({
      'items.0.name': ['is required'],
      'items.2.name': ['must be a single line'],
      'items.2.unit': [`must be at most ${FIELD_MAX.unit} characters`],
      'items.2.notes': [`must be at most ${FIELD_MAX.notes} characters`],
      'items.3.cost_price': ['must be at least 0'],
      'items.3.sell_price': [`must be at most ${MAX_PRICE}`],
      'items.4.category': ['must be a single line'],
      'items.4.cost_price': ['must have at most 2 decimals'],
    });
  });
});
