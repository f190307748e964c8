import { describe, expect, it } from 'vitest';
import { Router } from '../../src/http.js';

describe('the router', () => {
  const router = new Router<string>()
    .get('/api/runs', 'runs')
    .get('/api/runs/{run}', 'run')
    .get('/api/runs/{run}/eval/{instance}/{attempt}', 'log')
    .on(['GET', 'HEAD'], '', 'root')
    .post('v1beta/models/{model}:generateContent', 'gemini')
    .post('v1beta/models/{model}:countTokens', 'count')
    .post('files/{path...}', 'file');

  it('matches method and pattern in order, with the parameters percent-decoded', () => {
    expect(router.find('GET', '/api/runs')).toEqual({ handler: 'runs', params: {} });
    expect(router.find('GET', '/api/runs/a%2Fb')).toEqual({ handler: 'run', params: { run: 'a/b' } });
    expect(router.find('GET', '/api/runs/r/eval/django__django-1/2')).toEqual({
      handler: 'log',
      params: { run: 'r', instance: 'django__django-1', attempt: '2' },
    });
    expect(router.find('HEAD', '')).toEqual({ handler: 'root', params: {} });
    expect(router.find('POST', 'files/a/b.txt')).toEqual({ handler: 'file', params: { path: 'a/b.txt' } });
  });

  it("splits a segment at its literal (Gemini's model:method), and takes a malformed escape as it is", () => {
    expect(router.find('POST', 'v1beta/models/gemini-2.5-pro:generateContent')?.params).toEqual({
      model: 'gemini-2.5-pro',
    });
    expect(router.find('POST', 'v1beta/models/m:countTokens')?.handler).toBe('count');
    expect(router.find('GET', '/api/runs/%E0%A4%A')?.params).toEqual({ run: '%E0%A4%A' });
  });

  it('finds nothing for another method, a longer path or a regex character taken literally', () => {
    expect(router.find('POST', '/api/runs')).toBeNull();
    expect(router.find('GET', '/api/runs/a/b')).toBeNull();
    expect(router.find('POST', 'v1beta/models/m:generateContentX')).toBeNull();
    expect(new Router<number>().get('/a.b', 1).find('GET', '/aXb')).toBeNull();
  });
});
