-- agent/diagnostics answered from vim.diagnostic. A fake language server publishes problems
-- with vim.diagnostic.set, as a real one would: for src/app.py 100 ms after the agent's edit
-- changed it. Then the scenario has the proxy (tests/editors/lsp_proxy.py) ask Neovim what
-- the Tether server asks: agent/diagnostics for two URIs, then for every document.
local H = dofile(vim.env.HARNESS)
H.setup({ settings = { autoApprove = { 'edit_file' } } })
local ws = vim.env.WORKSPACE
vim.cmd.edit(ws .. '/other.py')
local other = vim.api.nvim_get_current_buf()
vim.cmd.edit(ws .. '/src/app.py')
local app = vim.api.nvim_get_current_buf()
local ns = vim.api.nvim_create_namespace('fake-language-server')
local severity = vim.diagnostic.severity
H.result.answers = {}

-- a scratch buffer's problem (no file): never in an answer
local scratch = vim.api.nvim_create_buf(false, true)
vim.diagnostic.set(ns, scratch, { { lnum = 0, col = 0, message = 'scratch', severity = 1 } })
vim.diagnostic.set(ns, other, {
  {
    lnum = 0,
    col = 0,
    end_col = 6,
    severity = severity.WARN,
    message = 'unused import',
    source = 'fakels',
    code = 'W0611',
  },
  { lnum = 1, col = 0, severity = severity.HINT, message = 'a hint, no end, no source' },
})

local function ask(params)
  local client = require('tether').get_client(app)
  client:notify('$/tetherTest/request', { method = 'agent/diagnostics', params = params })
end

local function publish()
  local line = vim.api.nvim_buf_get_lines(app, 1, 2, false)[1]
  H.result.line_when_published = line
  local col = assert(line:find('nme', 1, true)) - 1 -- a byte column, as vim.diagnostic has it
  H.result.byte_col = col
  vim.diagnostic.set(ns, app, {
    {
      lnum = 1,
      col = col,
      end_lnum = 1,
      end_col = col + 3,
      severity = severity.ERROR,
      message = "name 'nme' is not defined",
      source = 'fakels',
      code = 1,
    },
  })
  ask({ uris = { vim.uri_from_bufnr(app), vim.uri_from_fname(ws .. '/not-loaded.py') } })
  local diagnostics = require('tether.diagnostics')
  H.result.converted = {}
  for _, encoding in ipairs({ 'utf-16', 'utf-32' }) do
    H.result.converted[encoding] = diagnostics.collect({ vim.uri_from_bufnr(app) }, encoding)
  end
end

vim.api.nvim_buf_attach(app, false, {
  on_lines = function()
    vim.defer_fn(H.step(publish), 100) -- the language server answers the change later
    return true -- once
  end,
})

vim.lsp.handlers['$/tetherTest/answered'] = function(_, params)
  table.insert(H.result.answers, params)
  if #H.result.answers == 1 then
    ask(vim.empty_dict()) -- no uris: every document with problems
  end
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.encoding = require('tether').get_client(app).offset_encoding
  H.when(function()
    return #H.result.answers == 2
  end, function()
    H.finish('done')
  end)
end)

vim.cmd('Tether introduce a typo')
