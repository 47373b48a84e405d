--- Answers `agent/code`: the model's code tools (definition, references, hover, symbols)
--- answered by the language servers attached to the buffer in Neovim, so that Tether does
--- not start a second one next to them.
---
--- A file that is not loaded is loaded into a hidden buffer (its filetype detected, so the
--- user's LSP set-up attaches to it; a running language server already serving files of
--- that kind in the same root is attached too), and the answer waits, bounded, for a client
--- to attach. Positions arrive in the encoding negotiated with Tether and are converted to
--- each language server's own, and back. No language server for the file (or none that
--- answers in time): `{ unavailable = reason }`, and Tether asks its own.
local M = {}

--- How long a file's language server may take to attach (ms).
M.attach_ms = 10000
--- How long the language servers may take to answer (ms); Tether's own limit
--- (`languageServerTimeoutSeconds`, 30 s by default) is longer.
M.answer_ms = 25000

local METHODS = {
  definition = 'textDocument/definition',
  references = 'textDocument/references',
  hover = 'textDocument/hover',
  documentSymbols = 'textDocument/documentSymbol',
  workspaceSymbols = 'workspace/symbol',
  rename = 'textDocument/rename',
}

local function is_11()
  return vim.fn.has('nvim-0.11') == 1
end

--- The byte index of an `encoding` column of `line`.
local function byteindex(line, encoding, index)
  if is_11() then
    return vim.str_byteindex(line, encoding, index, false)
  end
  return vim.lsp.util._str_byteindex_enc(line, index, encoding)
end

--- The `encoding` column of a byte index of `line`.
local function utfindex(line, encoding, byte)
  if is_11() then
    return (vim.str_utfindex(line, encoding, byte, false))
  end
  return (vim.lsp.util._str_utfindex_enc(line, byte, encoding))
end

--- Line `row` (0-based) of a document: its loaded buffer's, else the file's on disk.
---@param uri string
---@param row integer
---@return string?
local function line_of(uri, row)
  local buf = require('tether.buffers').find(uri)
  if buf then
    return vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  end
  if not vim.startswith(uri, 'file:') then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri), '', row + 1)
  return ok and lines[row + 1] or nil
end

--- A position of `uri` from encoding `from` to `to`.
---@param uri string
---@param position lsp.Position
---@param from string
---@param to string
---@return lsp.Position
local function convert(uri, position, from, to)
  if from == to or type(position) ~= 'table' then
    return position
  end
  local line = line_of(uri, position.line)
  if not line then
    return position
  end
  local byte = byteindex(line, from, math.min(position.character, utfindex(line, from, #line)))
  return { line = position.line, character = utfindex(line, to, byte) }
end

local function convert_range(uri, range, from, to)
  return {
    start = convert(uri, range.start, from, to),
    ['end'] = convert(uri, range['end'], from, to),
  }
end

local function supports(client, method, buf)
  if is_11() then
    return client:supports_method(method, buf)
  end
  return client.supports_method(method, { bufnr = buf })
end

local function request(client, method, params, handler, buf)
  if is_11() then
    return client:request(method, params, handler, buf)
  end
  return client.request(method, params, handler, buf)
end

--- The language servers (not Tether) attached to `buf` that answer `method`.
local function servers_of(buf, method)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
    local tether = client.name == require('tether').name
    if not tether and client.initialized and supports(client, method, buf) then
      table.insert(found, client)
    end
  end
  return found
end

local function under(path, root)
  if not root or root == '' then
    return true
  end
  root = vim.fs.normalize(root)
  return path == root or vim.startswith(path, root .. '/')
end

--- Attaches to `buf` the running language servers that already serve a file of its kind
--- (its filetype, or its extension) under their root.
local function attach_kin(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local ext = name:match('%.[^./]+$')
  local ft = vim.bo[buf].filetype
  local tether = require('tether').name
  for _, client in ipairs(vim.lsp.get_clients()) do
    local candidate = client.name ~= tether and not vim.lsp.buf_is_attached(buf, client.id)
    if candidate and under(name, client.root_dir) then
      for other in pairs(client.attached_buffers or {}) do
        if vim.api.nvim_buf_is_valid(other) then
          local other_name = vim.api.nvim_buf_get_name(other)
          local same = (ft ~= '' and vim.bo[other].filetype == ft)
            or (ext ~= nil and other_name:match('%.[^./]+$') == ext)
          if same then
            vim.lsp.buf_attach_client(buf, client.id)
            break
          end
        end
      end
    end
  end
end

--- The buffer of `uri`, loaded (hidden when it was not open), its filetype set.
---@param uri string
---@return integer? buf
---@return string? err
local function load(uri)
  if not vim.startswith(uri, 'file:') then
    return nil, 'not a file: ' .. uri
  end
  local buf = require('tether.buffers').find(uri)
  if not buf then
    local path = vim.uri_to_fname(uri)
    if vim.fn.filereadable(path) ~= 1 then
      return nil, 'cannot read ' .. path
    end
    buf = vim.fn.bufadd(path)
    vim.bo[buf].bufhidden = 'hide'
    vim.fn.bufload(buf)
  end
  if vim.bo[buf].filetype == '' then
    local ft = vim.filetype.match({ buf = buf })
    if ft then
      vim.bo[buf].filetype = ft -- FileType: the user's LSP set-up attaches its servers
    end
  end
  return buf
end

--- Calls `done(clients)` once some language server attached to `buf` answers `method`,
--- or with none after `M.attach_ms`.
local function when_attached(buf, method, done)
  local deadline = vim.uv.now() + M.attach_ms
  local tried_kin = false
  local function check()
    local clients = servers_of(buf, method)
    if #clients > 0 or vim.uv.now() > deadline then
      return done(clients)
    end
    if not tried_kin then
      tried_kin = true
      attach_kin(buf)
    end
    vim.defer_fn(check, 50)
  end
  check()
end

--- A `Location | Location[] | LocationLink[]` as `{uri, range}`s in Tether's encoding.
local function locations(result, encoding, into)
  if type(result) ~= 'table' then
    return
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  for _, item in ipairs(result) do
    local uri = item.targetUri or item.uri
    local range = item.targetSelectionRange or item.range
    if type(uri) == 'string' and type(range) == 'table' then
      local converted = convert_range(uri, range, encoding.server, encoding.tether)
      table.insert(into, { uri = uri, range = converted })
    end
  end
end

--- Hover contents as text.
local function hover_text(result)
  if type(result) ~= 'table' or result.contents == nil then
    return nil
  end
  local contents = result.contents
  if type(contents) == 'string' or contents.value then
    contents = { contents }
  end
  local parts = {}
  for _, part in ipairs(contents) do
    local text = type(part) == 'string' and part or part.value
    if type(text) == 'string' and text ~= '' then
      table.insert(parts, text)
    end
  end
  return #parts > 0 and table.concat(parts, '\n\n') or nil
end

--- `DocumentSymbol[] | SymbolInformation[] | WorkspaceSymbol[]` as `CodeSymbol`s.
local function symbols(result, uri, encoding, into)
  local function walk(item, depth, container)
    if type(item) ~= 'table' or type(item.name) ~= 'string' then
      return
    end
    local loc_uri, range
    if item.selectionRange then -- DocumentSymbol
      loc_uri, range = uri, item.selectionRange
    elseif type(item.location) == 'table' then
      loc_uri = item.location.uri
      local origin = { line = 0, character = 0 }
      range = item.location.range or { start = origin, ['end'] = origin }
    end
    if type(loc_uri) ~= 'string' then
      return
    end
    local kind = tonumber(item.kind) or 13
    table.insert(into, {
      name = item.name,
      kind = (kind >= 1 and kind <= 26) and kind or 13,
      location = {
        uri = loc_uri,
        range = convert_range(loc_uri, range, encoding.server, encoding.tether),
      },
      containerName = item.containerName or container,
      depth = depth,
    })
    for _, child in ipairs(item.children or {}) do
      walk(child, depth + 1, item.name)
    end
  end
  for _, item in ipairs(type(result) == 'table' and result or {}) do
    walk(item, 0, nil)
  end
end

--- A rename's `WorkspaceEdit` as text edits by URI; nil when it would create, rename or
--- delete a file.
local function changes_of(result, encoding)
  local out = {}
  if type(result) ~= 'table' then
    return out
  end
  local function add(uri, edits)
    out[uri] = out[uri] or {}
    for _, edit in ipairs(edits or {}) do
      table.insert(out[uri], {
        range = convert_range(uri, edit.range, encoding.server, encoding.tether),
        newText = edit.newText,
      })
    end
  end
  if type(result.documentChanges) == 'table' and #result.documentChanges > 0 then
    for _, change in ipairs(result.documentChanges) do
      if change.kind then
        return nil
      end
      add(change.textDocument.uri, change.edits)
    end
  else
    for uri, edits in pairs(result.changes or {}) do
      add(uri, edits)
    end
  end
  return out
end

--- The answer to one `agent/code` request, given to `reply`.
---@param params table
---@param tether_encoding string
---@param reply fun(answer: table)
function M.answer(params, tether_encoding, reply)
  local kind = type(params) == 'table' and params.request
  local method = METHODS[kind]
  if not method then
    return reply({ unavailable = 'Neovim does not answer ' .. tostring(kind) })
  end
  local uri = params.uri
  local function ask(buf, clients)
    if #clients == 0 then
      local what = uri and vim.fn.fnamemodify(vim.uri_to_fname(uri), ':~:.') or 'this workspace'
      local why = 'no language server in Neovim answers ' .. method .. ' for ' .. what
      return reply({ unavailable = why })
    end
    if kind == 'hover' or kind == 'rename' then
      clients = { clients[1] }
    end
    local pending, answered, finished = #clients, {}, false
    local found = { locations = {}, symbols = {} }
    local function finish()
      if finished then
        return
      end
      finished = true
      if #answered == 0 then
        return reply({ unavailable = 'the language servers in Neovim did not answer ' .. method })
      end
      local answer = { server = table.concat(answered, ', ') }
      if kind == 'definition' or kind == 'references' then
        answer.locations = found.locations
      elseif kind == 'hover' then
        answer.hover = found.hover or ''
      elseif kind == 'rename' then
        if found.changes == nil then
          return reply({ unavailable = 'the rename would also create, rename or delete a file' })
        end
        answer.changes = next(found.changes) and found.changes or vim.empty_dict()
      else
        answer.symbols = found.symbols
      end
      reply(answer)
    end
    vim.defer_fn(finish, M.answer_ms)
    for _, client in ipairs(clients) do
      local encoding = { tether = tether_encoding, server = client.offset_encoding or 'utf-16' }
      local sent = {}
      if uri then
        sent.textDocument = { uri = uri }
      end
      if params.position then
        sent.position = convert(uri, params.position, encoding.tether, encoding.server)
      end
      if kind == 'references' then
        sent.context = { includeDeclaration = true }
      elseif kind == 'workspaceSymbols' then
        sent.query = params.query or ''
      elseif kind == 'rename' then
        sent.newName = params.newName
      end
      request(client, method, sent, function(err, result)
        if not err and not finished then
          table.insert(answered, client.name)
          if kind == 'definition' or kind == 'references' then
            locations(result, encoding, found.locations)
          elseif kind == 'hover' then
            found.hover = hover_text(result)
          elseif kind == 'rename' then
            found.changes = changes_of(result, encoding)
          else
            symbols(result, uri, encoding, found.symbols)
          end
        end
        pending = pending - 1
        if pending == 0 then
          finish()
        end
      end, buf)
    end
  end
  if kind == 'workspaceSymbols' then
    local clients, seen = {}, {}
    for _, client in ipairs(vim.lsp.get_clients()) do
      if client.name ~= require('tether').name and client.initialized and not seen[client.name] then
        local buf = next(client.attached_buffers or {})
        if buf and supports(client, method, buf) then
          seen[client.name] = true
          table.insert(clients, client)
        end
      end
    end
    return ask(nil, clients)
  end
  local buf, err = load(uri or '')
  if not buf then
    return reply({ unavailable = err })
  end
  when_attached(buf, method, function(clients)
    ask(buf, clients)
  end)
end

--- The handler: runs in the coroutine Neovim gives a server request (its return value is
--- the response), else waits, bounded.
---@param params table
---@param ctx? table
---@return table
function M.handle(_, params, ctx)
  local tether = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = tether and tether.offset_encoding or 'utf-16'
  local co, is_main = coroutine.running()
  if co and not is_main then
    local answered = false
    M.answer(params, encoding, function(answer)
      vim.schedule(function() -- never resume before the yield below
        if answered then
          return
        end
        answered = true
        local ok, err = coroutine.resume(co, answer)
        if not ok then
          vim.notify('Tether: ' .. tostring(err), vim.log.levels.ERROR)
        end
      end)
    end)
    return coroutine.yield()
  end
  local answer
  M.answer(params, encoding, function(a)
    answer = answer or a
  end)
  vim.wait(M.attach_ms + M.answer_ms, function()
    return answer ~= nil
  end, 20)
  return answer or { unavailable = 'Neovim did not answer in time' }
end

return M
