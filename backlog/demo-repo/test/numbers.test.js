import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sum } from '../src/numbers.js';

test('sum', () => {
  assert.equal(sum([1, 2, 3]), 6);
});
