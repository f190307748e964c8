import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { AlightError, ExitCode } from '../errors.js';

/**
 * The address pods reach this machine at: the one this host sends from toward the API server (a UDP "connect" sends
 * nothing; it only picks the route), unless that is loopback (a cluster on this machine): then its first
 * non-loopback IPv4 address, which pods reach through their bridge.
 */
export async function advertiseHost(server: string): Promise<string> {
  const host = new URL(server).hostname.replace(/^\[|\]$/g, '');
  const { address, family } = await lookup(host);
  const local = await new Promise<string>((resolve, reject) => {
    const socket = createSocket(family === 6 ? 'udp6' : 'udp4');
    socket.once('error', reject);
    socket.connect(Number(new URL(server).port || 443), address, () => {
      const mine = socket.address().address;
      socket.close();
      resolve(mine);
    });
  });
  if (!isLoopback(local)) return local;
  const nic = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === 'IPv4');
  if (!nic)
    throw new AlightError(
      'cannot tell which address pods reach this machine at: pass --gateway-host (gateway.advertise)',
      ExitCode.usage,
    );
  return nic.address;
}

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1';
}
