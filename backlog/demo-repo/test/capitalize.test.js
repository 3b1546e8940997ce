import { test } from 'node:test';
import assert from 'node:assert/strict';
import { capitalize } from '../src/capitalize.js';

test('capitalize', () => {
  assert.equal(capitalize('loop'), 'Loop');
  assert.equal(capitalize(''), '');
});
