import { describeAttemptQueue } from '../../helpers/attempt-queue-contract.js';
import { MemoryAttemptQueue } from '../../helpers/memory-attempt-queue.js';

describeAttemptQueue('the in-memory queue', async () => {
  const queue = new MemoryAttemptQueue();
  return { coordinator: queue, worker: () => queue.worker(), close: () => queue.close() };
});
