import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A benchmark proxy listening on 127.0.0.1 under /v1; `stop` closes it, then runs `release`. */
export async function listenLocal(
  server: Server,
  release: () => void,
): Promise<{ url: string; stop(): Promise<null> }> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      release();
      return null;
    },
  };
}
