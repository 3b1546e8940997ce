import { describeAttemptQueue } from '../../helpers/attempt-queue-contract.js';
import { FakeAttemptQueue } from '../../helpers/fake-attempt-queue.js';

describeAttemptQueue('the in-memory queue', async () => {
  const queue = new FakeAttemptQueue();
  return { coordinator: queue, worker: () => queue.worker(), close: () => queue.close() };
});
