--- The `tether serve` client: its configuration, starting it, finding it, waiting until
--- it is ready, and requests in the spelling of Neovim 0.10 and 0.11.
local M = {}

local protocol = require('tether.protocol')

local handlers = {
  [protocol.methods.agentApprove] = function(...)
    return require('tether.approve').handle(...)
  end,
  [protocol.methods.agentEvent] = function(...)
    require('tether.commands').on_event(...)
  end,
  [protocol.methods.agentSaveDocuments] = function(...)
    return require('tether.save').handle(...)
  end,
  [protocol.methods.agentDiagnostics] = function(...)
    return require('tether.diagnostics').handle(...)
  end,
  [protocol.methods.agentAsk] = function(...)
    return require('tether.ask').handle(...)
  end,
  [protocol.methods.agentCode] = function(...)
    return require('tether.code').handle(...)
  end,
  ['workspace/applyEdit'] = function(...)
    return require('tether.edits').handle(...)
  end,
  ['$/cancelRequest'] = function(...)
    require('tether.approve').on_cancel(...)
    require('tether.ask').on_cancel(...)
  end,
}

--- Sends the current settings when they differ from what the client last sent.
---@param client vim.lsp.Client
function M.send_settings(client)
  local settings = require('tether').config.settings
  if vim.deep_equal(client.config.init_options, settings) then
    return
  end
  client.config.init_options = vim.deepcopy(settings)
  M.notify(client, 'workspace/didChangeConfiguration', { settings = { tether = settings } })
end

--- The `vim.lsp.start` configuration for a buffer's workspace.
---@param buf integer
---@return vim.lsp.ClientConfig? config
---@return string? err
function M.config(buf)
  local tether = require('tether')
  local cmd, err = tether.command()
  if not cmd then
    return nil, err
  end
  local settings = tether.config.settings
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.experimental = vim.tbl_extend('force', capabilities.experimental or {}, {
    tether = {
      approvals = true,
      events = true,
      saveDocuments = true,
      diagnostics = true,
      ask = true,
      code = true,
      changeSets = true, -- a change of several files is shown whole (`tether.changes`)
    },
  })
  return {
    name = tether.name,
    cmd = cmd,
    cmd_env = tether.config.cmd_env,
    root_dir = tether.root(buf),
    init_options = next(settings) and vim.deepcopy(settings) or vim.empty_dict(),
    capabilities = capabilities,
    handlers = handlers,
    -- `configure()` while the client started (get_clients() skips starting clients)
    on_init = function(client)
      M.send_settings(client)
    end,
  }
end

--- The Tether client serving a buffer: attached to it, else the one of its root.
---@param buf? integer
---@return vim.lsp.Client?
function M.get(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local name = require('tether').name
  local attached = vim.lsp.get_clients({ name = name, bufnr = buf })
  if attached[1] then
    return attached[1]
  end
  local clients = vim.lsp.get_clients({ name = name })
  if not require('tether.buffers').is_file(buf) then
    return clients[#clients] -- the transcript, a float...: the latest server
  end
  local root = require('tether').root(buf)
  for _, client in ipairs(clients) do
    if client.root_dir == root then
      return client
    end
  end
  return nil
end

--- Starts (or reuses) the server for a buffer's workspace and attaches the buffer if it
--- holds a file.
---@param buf? integer
---@return vim.lsp.Client? client
---@return string? err
function M.start(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local config, err = M.config(buf)
  if not config then
    return nil, err
  end
  local is_file = require('tether.buffers').is_file(buf)
  local ok, id = pcall(function()
    if is_file then
      return vim.lsp.start(config, { bufnr = buf })
    elseif vim.fn.has('nvim-0.11') == 1 then
      return vim.lsp.start(config, { bufnr = buf, attach = false })
    end
    return vim.lsp.start_client(config)
  end)
  if not ok or not id then
    local why = ok and 'Neovim could not spawn it' or tostring(id)
    return nil, string.format('cannot start `%s`: %s', table.concat(config.cmd, ' '), why)
  end
  return vim.lsp.get_client_by_id(id)
end

--- The client for a buffer, started if needed.
---@param buf? integer
---@return vim.lsp.Client? client
---@return string? err
function M.ensure(buf)
  local client = M.get(buf)
  if client then
    return client
  end
  return M.start(buf) -- not in an `or`: that would drop the error
end

--- Calls `fn()` once the client is initialized and, for a file buffer, attached (so the
--- server has the buffer's text); `fn(err)` if the client stops or takes over 20 s.
---@param client vim.lsp.Client
---@param buf integer
---@param fn fun(err?: string)
function M.when_ready(client, buf, fn)
  local deadline = vim.uv.now() + 20000
  local function check()
    local stopped
    if vim.fn.has('nvim-0.11') == 1 then
      stopped = client:is_stopped()
    else
      stopped = client.is_stopped()
    end
    if stopped then
      return fn('the Tether server stopped')
    end
    local attached = not require('tether.buffers').is_file(buf)
      or vim.lsp.buf_is_attached(buf, client.id)
    if client.initialized and attached then
      return fn()
    end
    if vim.uv.now() > deadline then
      return fn('the Tether server did not start within 20 s')
    end
    vim.defer_fn(check, 20)
  end
  check()
end

--- A request to the server (Neovim 0.10 and 0.11 spellings).
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param handler fun(err: lsp.ResponseError?, result: any)
---@return boolean sent
function M.request(client, method, params, handler)
  if vim.fn.has('nvim-0.11') == 1 then
    return (client:request(method, params, handler))
  end
  return (client.request(method, params, handler))
end

--- A notification to the server (Neovim 0.10 and 0.11 spellings).
---@param client vim.lsp.Client
---@param method string
---@param params table
function M.notify(client, method, params)
  if vim.fn.has('nvim-0.11') == 1 then
    client:notify(method, params)
  else
    client.notify(method, params)
  end
end

return M
