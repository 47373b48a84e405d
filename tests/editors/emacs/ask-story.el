;;; ask-story.el --- The model asks, the user answers in the minibuffer  -*- lexical-binding: t; -*-

;; Environment as diagnostics-story.el.  The scripted model calls `ask_user' twice: a
;; question with choices only, then one without choices; what the user types (standard
;; input, in batch mode) answers each.  The test reads the results on the wire.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 90 nil (lambda () (message "ask-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (deadline (+ (float-time) 60)))
  (find-file (expand-file-name "src/app.py" root))
  (tether-run "pick for me")
  (while (and (not tether-last-result) (< (float-time) deadline))
    (accept-process-output nil 0.05))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert (json-encode `((outcome . ,(plist-get tether-last-result :outcome)))))))
(kill-emacs 0)
