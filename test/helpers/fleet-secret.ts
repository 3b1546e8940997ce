/** The fleet secret of the tests' queues: every coordinator and worker a test starts gets it (a test of the secret itself makes its own). */
import { FleetKeys } from '../../src/adapters/queue/fleet-secret.js';

export const TEST_SECRET = 'test-fleet-secret-0123456789abcdef0123456789abcdef';
export const TEST_KEYS = new FleetKeys([TEST_SECRET]);
