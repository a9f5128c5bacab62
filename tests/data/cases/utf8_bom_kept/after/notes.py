naïve = False
résumé = 'x'
