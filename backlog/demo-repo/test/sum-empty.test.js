import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sum } from '../src/numbers.js';

test('the sum of no numbers is 0', () => {
  assert.equal(sum([]), 0);
});
