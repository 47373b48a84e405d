-- A real language server (basedpyright) in Neovim beside Tether: the agent's edit brings a
-- real diagnostic into vim.diagnostic, the plugin answers agent/diagnostics with it, and the
-- server puts it in the edit's tool result.
-- Env: BASEDPYRIGHT (the `basedpyright-langserver` command). Runs behind lsp_proxy.py.
local H = dofile(vim.env.HARNESS)
-- basedpyright's first analysis takes seconds here, more on a loaded 2-core CI machine (its
-- answer came after a 2 s settle there once): give its problems time to settle.
H.setup({
  settings = {
    autoApprove = { 'edit_file' },
    diagnosticsSettleMs = 5000,
    diagnosticsMaxWaitMs = 30000,
  },
})
local ws = vim.env.WORKSPACE
vim.cmd.edit(ws .. '/src/app.py')
local app = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(app)
local pyright = vim.lsp.start({
  name = 'basedpyright',
  cmd = { vim.env.BASEDPYRIGHT, '--stdio' },
  root_dir = ws,
  settings = { basedpyright = { analysis = { typeCheckingMode = 'basic' } } },
}, { bufnr = app })
H.result.answers = {}

--- The language server's problems about `nme` (the agent's typo), once it published them.
local function typo_reported()
  for _, d in ipairs(vim.diagnostic.get(app)) do
    if d.message:find('nme', 1, true) then
      return d
    end
  end
  return nil
end

vim.lsp.handlers['$/tetherTest/answered'] = function(_, params)
  table.insert(H.result.answers, params)
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.encoding = require('tether').get_client(app).offset_encoding
  H.when(function()
    return typo_reported() ~= nil
  end, function()
    local d = typo_reported()
    H.result.published = { message = d.message, source = d.source, col = d.col, lnum = d.lnum }
    H.result.line = vim.api.nvim_buf_get_lines(app, 1, 2, false)[1]
    local client = require('tether').get_client(app)
    local ask = { method = 'agent/diagnostics', params = { uris = { uri } } }
    client:notify('$/tetherTest/request', ask)
    H.when(function()
      return #H.result.answers == 1
    end, function()
      local server = vim.lsp.get_client_by_id(pyright)
      server:stop() -- shutdown and exit: its node process ends with it
      H.when(function()
        return server:is_stopped()
      end, function()
        H.finish('done')
      end)
    end)
  end)
end)

vim.cmd('Tether introduce a typo')
