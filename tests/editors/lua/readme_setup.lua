-- After the README's plain `init.lua` (loaded with -u): `:Tether` as a new user types it,
-- with nothing of the tests' own set-up. The result: the run's outcome and answer, or the
-- plugin's notes when it could not start.
local H = dofile(vim.env.HARNESS)
H.keep_notes()
H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.finish('done')
end)
vim.cmd.edit(vim.env.WORKSPACE .. '/app.py')
vim.cmd('Tether say hello')
vim.defer_fn(function() -- a plugin that could not start says so and runs nothing
  if not H.done and #H.result.notes > 0 and not H.result.run then
    H.finish('done')
  end
end, 20000)
