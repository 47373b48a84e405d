--- `:checkhealth tether`
local M = {}

function M.check()
  local health = vim.health
  local tether = require('tether')
  local protocol = require('tether.protocol')
  health.start('tether')

  local v = vim.version()
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. version)
  else
    health.error('Neovim ' .. version .. ': Tether needs Neovim 0.10 or newer')
  end

  if tether.did_setup then
    health.ok('require("tether").setup() was called')
  else
    health.warn('require("tether").setup() was not called: nothing starts the server')
  end

  local cmd, err = tether.command()
  if not cmd then
    health.error(err)
  elseif vim.fn.executable(cmd[1]) ~= 1 then
    health.error('`' .. cmd[1] .. '` is not executable', { 'set `cmd` in setup()' })
  else
    local probe = vim.list_slice(cmd, 1, cmd[#cmd] == 'serve' and #cmd - 1 or #cmd)
    table.insert(probe, '--version')
    local ok, res = pcall(function()
      return vim.system(probe, { text = true }):wait(10000)
    end)
    local out = ok and vim.trim((res.stdout or '') .. (res.stderr or '')) or tostring(res)
    if ok and res.code == 0 then
      health.ok(string.format('server command `%s`: %s', table.concat(cmd, ' '), out))
    else
      health.error(string.format('`%s` failed: %s', table.concat(probe, ' '), out))
    end
  end

  local settings = tether.config.settings
  if settings.provider then
    health.ok('provider: ' .. tostring(settings.provider))
  else
    health.info('no provider in settings: the server uses TETHER_PROVIDER, if set')
  end

  local clients = vim.lsp.get_clients({ name = tether.name })
  if #clients == 0 then
    health.info('the server is not running (it starts when a file is opened, or on :Tether)')
  end
  for _, client in ipairs(clients) do
    local caps = client.server_capabilities or {}
    local info = caps.experimental and caps.experimental.tether
    if not client.initialized or not info then
      health.warn(string.format('server %d for %s is starting', client.id, client.root_dir))
    elseif info.protocolVersion ~= protocol.protocol_version then
      health.error(
        string.format(
          'server %d speaks protocol %s; this plugin speaks %d',
          client.id,
          tostring(info.protocolVersion),
          protocol.protocol_version
        )
      )
    else
      health.ok(
        string.format(
          'server %d running for %s (protocol %d; providers: %s)',
          client.id,
          client.root_dir,
          info.protocolVersion,
          table.concat(info.providers or {}, ', ')
        )
      )
    end
  end
end

return M
