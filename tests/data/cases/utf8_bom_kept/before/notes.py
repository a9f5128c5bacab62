naïve = True
résumé = 'x'
