;;; eglot-story.el --- Plain Eglot (no Tether package) runs tether.run  -*- lexical-binding: t; -*-

;; Environment as story.el, plus TETHER_EGLOT_DIR (Debian's elpa-eglot).  Eglot is used as
;; its users have it: `tether serve' in `eglot-server-programs', the run started with a
;; synchronous `eglot-execute-command' and a string argument, the approval answered in the
;; minibuffer (stdin here), the outcome read from *Messages* and the events buffer.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EGLOT_DIR"))
(require 'eglot)
(require 'python)

(run-with-timer 90 nil (lambda () (message "eglot-story.el: watchdog fired") (kill-emacs 3)))

(setq eglot-confirm-server-initiated-edits nil)
;; A loaded machine starts the server in more than the default 3 s: wait for it.
(setq eglot-sync-connect 60)
(setq eglot-server-programs
      `((python-mode . (,(getenv "TETHER_PYTHON") "-m" "tether" "serve"
                        :initializationOptions
                        (:provider "scripted" :script ,(getenv "TETHER_SCRIPT_FILE"))))))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (app (find-file (expand-file-name "src/app.py" root)))
       server answer)
  (with-current-buffer app
    (python-mode)
    (apply #'eglot (eglot--guess-contact))
    (setq server (eglot-current-server))
    ;; Blocks Emacs until the run ends, as the user's `M-x eglot-execute-command' does.
    (setq answer (eglot-execute-command server "tether.run" ["say" "hi"])))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert
     (json-encode
      `((outcome . ,(plist-get answer :outcome))
        (appBuffer . ,(with-current-buffer app (buffer-string)))
        (events . ,(with-current-buffer (jsonrpc-events-buffer server) (buffer-string)))
        (messages . ,(with-current-buffer "*Messages*" (buffer-string)))))))
  (kill-emacs 0))
