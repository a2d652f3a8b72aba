import { describe, expect, it } from 'vitest'
import { nginxConfig, nginxVersionOf } from '../src/gateway/nginx.ts'

const options = {
  workers: 1 as const,
  listenPort: 40001,
  upstreamPort: 40002,
  dir: '/tmp/bench-gateway-x',
  configureArguments: '--with-cc-opt=-O2 --without-http_uwsgi_module --without-http_scgi_module',
}

describe('nginx configuration', () => {
  it('when generated, then it is a plain reverse proxy on 127.0.0.1 with upstream keep-alive', () => {
    const config = nginxConfig(options)
    expect(config).toContain('worker_processes 1;')
    expect(config).toContain('listen 127.0.0.1:40001;')
    expect(config).toContain('server 127.0.0.1:40002;')
    expect(config).toMatch(/upstream service \{[^}]*keepalive 32;/)
    expect(config).toContain('proxy_pass http://service;')
    expect(config).toContain('proxy_http_version 1.1;')
    expect(config).toContain('proxy_set_header Connection "";')
    expect(config).toContain('access_log off;')
  })

  it('when generated, then the pid file, error log and temp paths are all in the run dir', () => {
    const config = nginxConfig(options)
    expect(config).toContain('pid /tmp/bench-gateway-x/nginx.pid;')
    expect(config).toContain('error_log /tmp/bench-gateway-x/error.log warn;')
    expect(config).toContain('proxy_temp_path /tmp/bench-gateway-x/temp/proxy;')
    expect(config).toContain('client_body_temp_path /tmp/bench-gateway-x/temp/client_body;')
    // every absolute path the configuration names is below the run dir
    const paths = config.match(/ \/[^\s;]+/g) ?? []
    expect(paths.length).toBeGreaterThan(0)
    for (const path of paths) expect(path.trim().startsWith('/tmp/bench-gateway-x/')).toBe(true)
  })

  it('when nginx was built without a module, then its temp path directive is left out (it would be unknown)', () => {
    const config = nginxConfig(options)
    expect(config).toContain('fastcgi_temp_path')
    expect(config).not.toContain('uwsgi_temp_path')
    expect(config).not.toContain('scgi_temp_path')
  })

  it("when workers is 'auto', then worker_processes is auto", () => {
    expect(nginxConfig({ ...options, workers: 'auto' })).toContain('worker_processes auto;')
  })

  it('when nginx -V prints its version, then the version is read from it', () => {
    expect(nginxVersionOf('nginx version: nginx/1.22.1\nbuilt with OpenSSL 3.0.9')).toBe('1.22.1')
    expect(nginxVersionOf('something else')).toBeUndefined()
  })
})
