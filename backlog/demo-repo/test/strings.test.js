import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reverse } from '../src/strings.js';

test('reverse', () => {
  assert.equal(reverse('abc'), 'cba');
});
