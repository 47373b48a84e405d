;;; code-story.el --- The agent's code tools answered by Eglot  -*- lexical-binding: t; -*-

;; Environment as diagnostics-story.el, with TETHER_LSP (basedpyright-langserver) and
;; TETHER_EGLOT_DIR.  src/app.py is open with Eglot running basedpyright; src/lib.py is on
;; disk only.  The scripted model calls the code tools; the test reads their results on the
;; wire.  The report says which basedpyright processes run under this Emacs, and whether
;; Tether's server started one of them; and whether lib.py got a buffer Eglot manages.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(add-to-list 'load-path (getenv "TETHER_EGLOT_DIR"))
(require 'eglot)
(require 'python)
(require 'tether)

(run-with-timer 100 nil (lambda () (message "code-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(defun story-language-servers ()
  "basedpyright processes under this Emacs: (PID . STARTED-BY-TETHER)."
  (let (found)
    (dolist (pid (list-system-processes))
      (let ((args (alist-get 'args (process-attributes pid))))
        (when (and args (string-match-p "basedpyright" args))
          (let ((parent (alist-get 'ppid (process-attributes pid)))
                (under-tether nil)
                (mine nil))
            (while (and parent (> parent 1) (not mine))
              (if (= parent (emacs-pid))
                  (setq mine t)
                (when (string-match-p "tether serve"
                                      (or (alist-get 'args (process-attributes parent)) ""))
                  (setq under-tether t))
                (setq parent (alist-get 'ppid (process-attributes parent)))))
            (when mine (push (cons pid under-tether) found))))))
    found))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (deadline (+ (float-time) 80))
       app)
  (with-temp-file (expand-file-name "src/lib.py" root)
    (insert (getenv "TETHER_LIB")))
  (setq app (find-file (expand-file-name "src/app.py" root)))
  (with-current-buffer app
    (setq eglot-server-programs `((python-mode . (,(getenv "TETHER_LSP") "--stdio"))))
    (python-mode)
    (apply #'eglot (eglot--guess-contact))
    (while (and (not (eglot-current-server)) (< (float-time) deadline))
      (accept-process-output nil 0.05)))
  (tether-run "look at the code")
  (while (and (not tether-last-result) (< (float-time) deadline))
    (accept-process-output nil 0.05))
  (let* ((lib (find-buffer-visiting (expand-file-name "src/lib.py" root)))
         (servers (story-language-servers)))
    (with-temp-file (getenv "TETHER_RESULT")
      (insert
       (json-encode
        `((outcome . ,(plist-get tether-last-result :outcome))
          (servers . ,(length servers))
          (started_by_tether . ,(length (seq-filter #'cdr servers)))
          (lib_managed . ,(if (and lib (with-current-buffer lib (eglot-current-server))) t
                            :json-false))
          (owned . ,(if (bound-and-true-p story-owned) t :json-false)))))))
  (kill-emacs 0))
