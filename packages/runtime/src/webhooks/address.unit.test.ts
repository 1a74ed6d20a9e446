import { describe, expect, it } from 'vitest';
import { isRefusedAddress, resolveWebhookHost } from './address';

describe('webhook address checks', () => {
  it('refuse loopback, private, link-local, metadata and their IPv6 and mapped forms', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a9fe:a9fe',
    ]) {
      expect(isRefusedAddress(address), address).toBe(true);
    }
  });

  it('let public addresses through', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isRefusedAddress(address), address).toBe(false);
  });

  it('resolve names and check every address, unless private targets are allowed', async () => {
    await expect(resolveWebhookHost('localhost', false)).rejects.toThrow('webhooks may not reach');
    await expect(resolveWebhookHost('[::1]', false)).rejects.toThrow('webhooks may not reach');
    expect((await resolveWebhookHost('127.0.0.1', true))[0]!.address).toBe('127.0.0.1');
  });
});
