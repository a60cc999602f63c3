// A `node --import` hook for tests that check which modules a process loads: with MODULE_LOG_FILE set, every module
// the process loads (ESM and CommonJS) is appended to that file as `<pid> <url>`. Child processes inherit
// NODE_OPTIONS, so the pid tells the process apart (e.g. the embedded database's initdb child).
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const file = process.env['MODULE_LOG_FILE'];
if (file !== undefined && file !== '') {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(file, `${process.pid} ${url}\n`);
      return nextLoad(url, context);
    },
  });
}
